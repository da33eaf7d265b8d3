"""Services on the runtime: a folder (package) per service; helpers several share at the top."""
