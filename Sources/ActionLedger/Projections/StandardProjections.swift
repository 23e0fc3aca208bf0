extension ProjectionRegistry {
    /// Every projection the engine keeps inline, in the order they are applied.
    public static let standard = ProjectionRegistry([
        TodayProjection(), AutoShippedProjection(), AuditProjection(), DevicesProjection(), ActivityProjection(),
    ])
}
