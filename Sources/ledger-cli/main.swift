import ArgumentParser
import ActionLedger
print("x")
