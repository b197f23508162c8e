complete -c mrsvctl -s r -d 'Release (delete) the reservations RSVID names (ids, ALL, regular expressions), or with -g every reservation of that group' -r
complete -c mrsvctl -s q -d 'Show reservations (an id, a regular expression or ALL) in detail, as mdiag -r' -r
complete -c mrsvctl -s l -d 'List reservations (an id, a regular expression or ALL; default ALL), as showres' -r
complete -c mrsvctl -s m -d 'Modify a reservation: ATTR=VALUE, ATTR+=VALUE or ATTR-=VALUE (repeatable; duration, endtime, starttime, hostexp, reqtaskcount, flags, rsvgroup); the reservation id follows' -r
complete -c mrsvctl -s e -d 'End time (same forms as -s; INFINITY); with -m: endtime=VALUE (`+=T`, `-=T` relative)' -r
complete -c mrsvctl -s n -d 'Reservation name (id) instead of system.N' -r
complete -c mrsvctl -s a -d 'Access list: TYPE==NAME[:NAME],... (USER, GROUP, ACCT, CLASS, QOS); with -m also TYPE+= and TYPE-=' -r
complete -c mrsvctl -s d -d 'Duration `[[[DD:]HH:]MM:]SS` or INFINITY; with -m `+=T`/`-=T` change it' -r
complete -c mrsvctl -s h -d 'Host expression: ALL, names, regular expressions, class:CLASS, feature:FEATURE' -r
complete -c mrsvctl -s s -d 'Start time (`[HH[:MM[:SS]]][_MO[/DD[/YY]]]`, +offset, epoch); with -m `+=T`/`-=T` move it' -r
complete -c mrsvctl -s t -d 'Processor count, or ALL (every processor of every node)' -r
complete -c mrsvctl -s f -d 'Only nodes with these features (colon separated)' -r
complete -c mrsvctl -s F -d 'Reservation flags (comma separated); with -m they replace the flags' -r
complete -c mrsvctl -s g -d 'Reservation group: with -c the group to create in; with -r every reservation of it' -r
complete -c mrsvctl -s p -d 'Only nodes of this partition' -r
complete -c mrsvctl -s x -d 'Leave out the nodes of these running jobs (comma separated)' -r
complete -c mrsvctl -s b -d 'Moab options Arches has no model for (-b subtype, -D description, -I signal, -P profile, -S set attribute, -T trigger, -V variable, -i index): each reports that' -r
complete -c mrsvctl -s D -r
complete -c mrsvctl -s I -r
complete -c mrsvctl -s P -r
complete -c mrsvctl -s R -d 'Resources per task (with -c and a numeric -t): PROCS=N[;PROCS=N]... (separators ; , +); the reservation holds -t × PROCS processors. MEM, DISK, SWAP and GRES are refused: a reservation holds processors only. With -c alone, a number is the transaction id of an `mshow -a --flags=tid` row: that window is reserved' -r
complete -c mrsvctl -s S -r
complete -c mrsvctl -s T -r
complete -c mrsvctl -s V -r
complete -c mrsvctl -s i -r
complete -c mrsvctl -l flags -d 'With -q ALL: completed (Arches keeps no completed reservations: reports that)' -r
complete -c mrsvctl -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mrsvctl -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mrsvctl -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mrsvctl -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mrsvctl -l help -d 'Print help'
complete -c mrsvctl -s c -d 'Create a reservation'
complete -c mrsvctl -s C -d 'Clear disabled time slots of standing reservations: Arches disables none, so this reports that'
complete -c mrsvctl -s E -d 'Exclusive: create only where no other reservation holds the same nodes at the same time'
complete -c mrsvctl -l xml -d 'Print Moab\'s XML document instead of text'
