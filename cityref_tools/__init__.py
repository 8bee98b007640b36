"""The Python infrastructure shared by the conformance suite (conformance/), the benchmark (bench/)
and the scripts (scripts/): service descriptors, free ports, process groups, /proc figures."""
