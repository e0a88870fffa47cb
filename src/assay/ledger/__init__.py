"""The evidence ledger: ``results/<CLAIM>/<check>.<device>.json``, one typed record per check and device.

``result`` declares the record; ``store`` is the one place that knows the folder layout and reads and writes
result files and figures; ``inputs`` says what a result depends on; ``environment`` what the machine had;
``merge`` the rules by which one result supersedes another; ``messages`` cleans what a failure says.
"""
