# Sourced (never run) by the diagnostics that time sets of HYBLAS_* settings against the default
# (offload-tile-diag.sh, offload-split-diag.sh). An entry is a value of KNOB or, with '=', a set
# of settings joined by '+' (e.g. HYBLAS_OFFLOAD_PIECES=8+HYBLAS_OFFLOAD_CREW=1); "default"
# sets nothing.
#   settings_named KNOB ENTRY...   every setting KNOB and the entries name (to unset between them)
#   apply_entry KNOB ENTRY NAMED   unset NAMED, then export what ENTRY says
settings_named() {
    local knob=$1 e
    shift
    echo "$knob $(for e in "$@"; do echo "$e" | tr '+' '\n' | sed -n 's/=.*//p'; done | sort -u | tr '\n' ' ')"
}

apply_entry() {
    local knob=$1 entry=$2 k kv
    for k in $3; do unset "$k"; done
    case $entry in
        default) ;;
        *=*) for kv in $(echo "$entry" | tr '+' ' '); do export "$kv"; done ;;
        *) export "$knob=$entry" ;;
    esac
}
