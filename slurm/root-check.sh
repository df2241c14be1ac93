# Sourced by prolog.sh and epilog.sh, which Slurm runs as root: they run only code
# that no one but root can change (the venv and package beside them, and every
# directory above them). Otherwise the job runs unpartitioned and the log says why
# (SECURITY.md).

# Prints the first path under or above the checkout $1 a non-root user could change.
untrusted() {
    d=$(cd "$1" && pwd)
    find "$d/.venv" "$d/grader" "$d/analysis" ! -type l \( ! -user 0 -o -perm /022 \) \
        -print -quit 2>/dev/null
    while :; do
        find "$d" -maxdepth 0 \( ! -user 0 -o \( -perm /022 ! -perm -1000 \) \) -print
        [ "$d" = / ] && break
        d=$(dirname "$d")
    done
}

# refuse_untrusted CHECKOUT WHAT: log and exit 0 (the job still runs) when untrusted.
refuse_untrusted() {
    bad=$(untrusted "$1" | head -1)
    [ -z "$bad" ] && return 0
    echo "$(date +%FT%T) $2 job ${SLURM_JOB_ID:-?}: refused to run gradeline as root:" \
         "$bad can be changed by a non-root user (install it root-owned, not group/other" \
         "writable; see SECURITY.md)" >> "$log"
    exit 0
}
