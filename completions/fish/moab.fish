complete -c moab -l config -d 'Configuration file (default: <home>/moab.cfg; without one the embedded default applies)' -r -F
complete -c moab -l socket -d 'Socket path (default: MOAB_SOCKET, else <home>/moab.sock)' -r -F
complete -c moab -l home -d 'Home directory (default: MOABHOMEDIR, else ~/.arches)' -r -F
complete -c moab -s h -l help -d 'Print help (see more with \'--help\')'
complete -c moab -s V -l version -d 'Print version'
