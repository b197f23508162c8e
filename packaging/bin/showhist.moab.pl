#!/bin/sh
# Moab's job-history tool name: the same command as showhist (man showhist).
exec "$(dirname "$0")/showhist" "$@"
