"""hcompile applications: benchmark workloads, the peer benchmark harness, the demo."""
