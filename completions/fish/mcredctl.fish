complete -c mcredctl -s q -d 'Query: config, accessfrom, accessto, limit, policies or role (profile: not supported)' -r
complete -c mcredctl -s d -d 'Destroy a credential: not supported (credentials are moab.cfg\'s)' -r
complete -c mcredctl -s h -d 'Hold a credential\'s jobs: not supported' -r
complete -c mcredctl -s l -d 'List the credentials of a type (user, group, acct, class, qos) as XML' -r
complete -c mcredctl -s m -d 'Modify a credential\'s configuration: config="ATTR=VALUE ..." (or ATTR=VALUE); administrators only' -r
complete -c mcredctl -s r -d 'Reset a credential\'s statistics or fairshare usage: stats, fairshare or all (credits: not supported); TYPE:NAME, or TYPE (TYPE:ALL) for every one of the type. Administrators only' -r
complete -c mcredctl -l format -d 'Output format: text, xml or json (case-insensitive, `--format=XML` works)' -r -f -a "text\t'Moab\'s human-readable text (the default)'
xml\t'Moab\'s one-line XML document (`<Data>...</Data>`), same as `--xml`'
json\t'The daemon\'s answer as JSON (the arches-api type; stable schema)'"
complete -c mcredctl -l socket -d 'Unix socket of the moab daemon (default: $MOAB_SOCKET, else $MOABHOMEDIR/moab.sock, else ~/.arches/moab.sock if it exists, else the system service\'s /run/arches/moab.sock)' -r -F
complete -c mcredctl -l host -d 'Server host. Accepted for compatibility with Moab clients (`--host=<master>`); Arches clients always talk to the local socket' -r
complete -c mcredctl -l timeout -d 'Seconds to wait for the daemon\'s answer before failing with `ERROR:  client timed out after N seconds` (Moab\'s CLIENTTIMEOUT, default 30)' -r
complete -c mcredctl -l help -d 'Print help'
complete -c mcredctl -l xml -d 'Print Moab\'s XML document instead of text'
