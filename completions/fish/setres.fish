complete -c setres -s a -d 'Accounts allowed to use the reservation (colon separated)' -r
complete -c setres -s b -d 'Reservation subtype: not supported by Arches' -r
complete -c setres -s c -d 'Charge credentials (ACCOUNT[,GROUP[,USER]]): not supported by Arches' -r
complete -c setres -s d -d 'Duration `[[[DD:]HH:]MM:]SS` or INFINITY' -r
complete -c setres -s e -d 'End time `[HH[:MM[:SS]]][_MO[/DD[/YY]]]`, `+[[[DD:]HH:]MM:]SS` or INFINITY' -r
complete -c setres -s f -d 'Only nodes with these features (colon separated)' -r
complete -c setres -s g -d 'Groups allowed to use the reservation (colon separated)' -r
complete -c setres -s n -d 'Reservation name (id)' -r
complete -c setres -s o -d 'Owner credential: not supported by Arches' -r
complete -c setres -s p -d 'Only nodes of this partition' -r
complete -c setres -s q -d 'Classes (queues) allowed to use the reservation (colon separated)' -r
complete -c setres -s Q -d 'QoS allowed to use the reservation (colon separated)' -r
complete -c setres -s r -d 'Per-task resources (PROCS=, MEM=...): not supported by Arches (whole processors are reserved)' -r
complete -c setres -s R -d 'Reservation profile: not supported by Arches' -r
complete -c setres -s s -d 'Start time `[HH[:MM[:SS]]][_MO[/DD[/YY]]]` or `+[[[DD:]HH:]MM:]SS` (default now)' -r
complete -c setres -s T -d 'Reservation trigger: not supported by Arches' -r
complete -c setres -s u -d 'Users allowed to use the reservation (colon separated)' -r
complete -c setres -s x -d 'Reservation flags (colon separated)' -r
complete -c setres -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c setres -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c setres -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c setres -s E -d 'Exclusive: only where no other reservation holds the same nodes at the same time'
complete -c setres -s h -l help -d 'Print help (see more with \'--help\')'
