"""What a verifier records and how a run is judged: the evidence flow.

``recorder`` is the ``evidence`` fixture's record; ``judge`` reads expectations and a run's phases into a
verdict; ``limits`` bounds CPU and wall time and measures what a run cost; ``selection`` decides which tests a
run takes; ``run`` carries a phase to the controller and makes the ledger's result.
"""
