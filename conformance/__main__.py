import sys

if sys.argv[1:2] == ["differential"]:
    from conformance.differential import main as differential

    sys.exit(differential(sys.argv[2:]))

from conformance.cli import main

sys.exit(main())
