complete -c showstats -s u -d 'Per-user statistics (optionally one user)' -r
complete -c showstats -s g -d 'Per-group statistics (optionally one group)' -r
complete -c showstats -s a -d 'Per-account statistics (optionally one account)' -r
complete -c showstats -s c -d 'Per-class statistics (optionally one class)' -r
complete -c showstats -s q -d 'Per-QoS statistics (optionally one QoS)' -r
complete -c showstats -s f -d 'Matrix of one statistic by processors and requested wall time: AVGXFACTOR (default), MAXXFACTOR, AVGQTIME, AVGBYPASS, MAXBYPASS, JOBCOUNT, PHREQUEST, PHRUN, BFCOUNT, BFPHRUN, WCACCURACY' -r
complete -c showstats -s n -d 'Node statistics (optionally one node): configured, minimum, maximum and average memory in use, processors and load, from the statistics profile (PROFILEDURATION intervals)' -r
complete -c showstats -s t -d 'Time frame of the kept profile history, with -u/-g/-a/-c/-q/-n: <TIME>[,<TIME>] (HH[:MM[:SS]][_MO[/DD[/YY]]], +DURATION or -DURATION = that long ago, epoch seconds; one time = from then until now)' -r
complete -c showstats -s j -d 'Job template statistics (optionally one template): the running and completed work of the jobs each statistics template (JOBMATCHCFG[...] JSTAT=NAME) counted, as -u shows users' -r
complete -c showstats -s T -d 'Fairshare tree statistics (FSTREE): per tree node the running and completed work of its credential and its members; optionally one node\'s subtree (NODE or TYPE:NODE) or the nodes down to a depth (root 0)' -r
complete -c showstats -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c showstats -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c showstats -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c showstats -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c showstats -s s -d 'General scheduler statistics (the default)'
complete -c showstats -s v -d 'Verbose: the scheduler\'s current time and minimum system utilization; every credential, even those with no running or completed job'
complete -c showstats -l xml -d 'Print Moab\'s XML document instead of text'
complete -c showstats -s h -l help -d 'Print help (see more with \'--help\')'
