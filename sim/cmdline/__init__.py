"""The command line's plumbing: arguments and requests, progress, reading and writing files, resources, signals."""
