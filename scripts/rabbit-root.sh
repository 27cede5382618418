# shellcheck shell=bash
# RabbitMQ 4.0 from a Debian 13 root beside the system: what rabbit-node.sh
# does for a node whose DIR/rabbitmq says 4.0. Sourced, not run; the script
# that sources it defines `die MESSAGE` (print, exit 1).
#
# Debian 13's rabbitmq-server 4.0.5 needs Erlang 27, built against a newer
# libc than Debian 12's, so it cannot be installed into this system. It runs
# from a Debian 13 root (ROOT: `scripts/install-deps --rabbitmq 4.0` makes
# it with debootstrap, in TARRY_RABBITMQ_ROOT, default
# /var/cache/tarry/rabbitmq-4.0): the node and its rabbitmqctl run under
# `chroot ROOT` with the environment a 3.10 node gets, on the host's
# loopback, registered with the host's epmd (a node in a network namespace,
# scripts/cluster start --netns: `ip netns exec NS chroot ROOT`, registered
# with the epmd it starts there from ROOT).
#
# While a node runs, its DIR is bind-mounted at the same path inside ROOT
# (so DIR/url, DIR/pid and DIR/tls/ stay where clients look, and the node
# and rabbitmqctl find its files), and ROOT/proc is mounted. Several nodes
# may run from one root at once: the mount table is the count of users.
# ROOT/proc is mounted by the first node to start and unmounted by the last
# to stop (when no node directory is mounted under ROOT any more), both under
# a lock (flock on ROOT/.tarry-lock). Directories made inside ROOT for mount
# points are listed in ROOT/.tarry-made and removed again once empty.
#
#   root_dir                   the root: TARRY_RABBITMQ_ROOT, or /var/cache/tarry/rabbitmq-4.0
#   root_ready ROOT            exit 0 when ROOT is a 4.0 root (made and complete)
#   root_check ROOT            dies, naming install-deps, unless ROOT is a 4.0 root
#   root_enter ROOT DIR [own-epmd]
#                              mounts ROOT/proc (once) and DIR at ROOT/DIR; starts the host's epmd
#                              (not with own-epmd: a node in a network namespace starts its own)
#   root_leave ROOT DIR NODE   kills what still runs from ROOT for NODE, unmounts DIR,
#                              and ROOT/proc when no node directory is left under ROOT
#   root_mounted ROOT DIR      exit 0 when DIR is mounted inside ROOT
#   root_pids ROOT             the pids of the processes whose root is ROOT

root_dir() { echo "${TARRY_RABBITMQ_ROOT:-/var/cache/tarry/rabbitmq-4.0}"; }

root_ready() { [ -x "$1/usr/lib/rabbitmq/bin/rabbitmq-server" ]; }

root_check() {
  root_ready "$1" || die "no RabbitMQ 4.0 root in $1 (make it with: scripts/install-deps --rabbitmq 4.0)"
}

root_locked() {  # ROOT CMD... -> runs CMD (which starts nothing that outlives it) holding ROOT's lock
  local root=$1; shift
  (
    flock -w 120 9 || { echo "cannot lock $root/.tarry-lock within 120 s" >&2; exit 1; }
    "$@"
  ) 9>"$root/.tarry-lock"
}

root_mounted() { mountpoint -q "$1$2"; }

root_pids() {
  find /proc -mindepth 2 -maxdepth 2 -name root -lname "$1" 2>/dev/null | cut -d/ -f3
}

node_pids_in_root() {  # ROOT NODE -> pids of the processes from ROOT that run for node NODE
  local pid
  for pid in $(root_pids "$1"); do
    tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxF "RABBITMQ_NODENAME=$2" && echo "$pid"
  done
  return 0
}

host_epmd() {  # the host's epmd listening on 4369, so that no node starts one from ROOT
  (exec 3<>/dev/tcp/127.0.0.1/4369) 2>/dev/null && return 0
  command -v epmd >/dev/null || { echo "epmd is not installed (scripts/install-deps)" >&2; return 1; }
  epmd -daemon
  for _ in $(seq 1 50); do
    (exec 3<>/dev/tcp/127.0.0.1/4369) 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the host's epmd does not listen on 127.0.0.1:4369" >&2
  return 1
}

root_enter_locked() {  # ROOT DIR
  local root=$1 d=$2 p made=()
  if ! mountpoint -q "$root/proc"; then
    mount -t proc proc "$root/proc" || { echo "cannot mount proc on $root/proc" >&2; return 1; }
  fi
  root_mounted "$root" "$d" && return 0
  if [ -e "$root$d" ] && [ -n "$(ls -A "$root$d" 2>/dev/null)" ]; then
    echo "$root$d exists and is not empty: the node directory $d would hide the root's own files" >&2
    return 1
  fi
  p=$d
  while [ ! -e "$root$p" ]; do made=("$p" ${made[@]+"${made[@]}"}); p=$(dirname "$p"); done
  mkdir -p "$root$d"
  [ ${#made[@]} -eq 0 ] || printf '%s\n' "${made[@]}" >> "$root/.tarry-made"
  mount --bind "$d" "$root$d" || { echo "cannot bind-mount $d on $root$d" >&2; return 1; }
}

root_enter() {  # ROOT DIR [own-epmd]
  local root=$1 d=$2
  case $d/ in "$root"/*) die "the node directory $d is inside the RabbitMQ 4.0 root $root" ;; esac
  [ "${3:-}" = own-epmd ] || host_epmd || die "RabbitMQ 4.0 nodes need the host's epmd"
  root_locked "$root" root_enter_locked "$root" "$d" || die "could not prepare $root for the node in $d"
}

other_node_mounts() {  # ROOT -> mount points under ROOT other than ROOT/proc and what is below it
  awk -v r="$1/" '{ m = $5 } index(m, r) == 1 && m != r "proc" && index(m, r "proc/") != 1 { print m }' \
    /proc/self/mountinfo
}

root_leave_locked() {  # ROOT DIR NODE
  local root=$1 d=$2 node=$3 pids rc=0
  pids=$(node_pids_in_root "$root" "$node")
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086  # a list of pids
    kill -9 $pids 2>/dev/null || true
    for _ in $(seq 1 50); do
      [ -z "$(node_pids_in_root "$root" "$node")" ] && break
      sleep 0.1
    done
  fi
  if root_mounted "$root" "$d"; then
    umount "$root$d" || { echo "cannot unmount $root$d" >&2; rc=1; }
  fi
  if [ -f "$root/.tarry-made" ]; then
    # Deepest first; a directory still in use (not empty, a mount point) stays listed.
    local dir kept=()
    while IFS= read -r dir; do
      [ -n "$dir" ] || continue
      if [ -d "$root$dir" ] && ! rmdir "$root$dir" 2>/dev/null; then kept+=("$dir"); fi
    done < <(awk '{ print length($0) "\t" $0 }' "$root/.tarry-made" | sort -rn | cut -f2- | uniq)
    if [ ${#kept[@]} -eq 0 ]; then rm -f "$root/.tarry-made"; else printf '%s\n' "${kept[@]}" > "$root/.tarry-made"; fi
  fi
  if [ -z "$(other_node_mounts "$root")" ] && mountpoint -q "$root/proc"; then
    if [ -n "$(root_pids "$root")" ]; then
      echo "processes still run from $root (pids $(root_pids "$root" | tr '\n' ' ')); $root/proc left mounted" >&2
      rc=1
    else
      umount "$root/proc" || { echo "cannot unmount $root/proc" >&2; rc=1; }
    fi
  fi
  return $rc
}

root_leave() {  # ROOT DIR NODE
  [ -d "$1" ] || return 0
  root_locked "$1" root_leave_locked "$@"
}
