import Foundation
import Hummingbird
import Metrics
import Prometheus

/// The server's metrics (`GET /metrics`, Prometheus text format): requests and their
/// latencies by route and status, durable commits, open streams. Kept in a registry of this
/// server's own, through a swift-metrics factory bound to it, rather than the process-wide
/// `MetricsSystem`: tests run many servers in one process, and bootstrapping twice traps.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    let commits: Metrics.Counter
    let openStreams: Metrics.Gauge
    /// Connections closed at once because their address held its share
    /// (`--max-connections-per-address`): a proxy not named `--trusted-proxy` shows here.
    let connectionsRefused: Metrics.Counter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.factory = factory
        commits = Metrics.Counter(label: "ledger_commands_committed_total", factory: factory)
        openStreams = Metrics.Gauge(label: "ledger_open_streams", factory: factory)
        connectionsRefused = Metrics.Counter(label: "ledger_connections_refused_total", factory: factory)
    }

    func request(route: String, method: String, status: Int, duration: Duration) {
        let dims = [("route", route), ("method", method), ("status", String(status))]
        Metrics.Counter(label: "ledger_http_requests_total", dimensions: dims, factory: factory).increment()
        Metrics.Timer(label: "ledger_http_request_duration_seconds", dimensions: [("route", route), ("method", method)],
                      factory: factory).recordNanoseconds(duration.nanoseconds)
    }

    var text: String { registry.emitToString() }
}

extension Duration {
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

/// Counts every request and its latency under its route pattern (never the raw path, so
/// action ids do not explode the label set).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.request(route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
                        status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }
}
