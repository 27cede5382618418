# shellcheck shell=bash
# The network of a cluster across network namespaces (scripts/cluster start
# --netns): three namespaces, each joined by a veth pair to a bridge on the
# host, all in one private /24 (PREFIX.0/24, the first free one of
# 10.213.1.0/24 to 10.213.254.0/24: no address or route of the host's in
# it). The bridge has PREFIX.1 (so clients on the host reach every node),
# node N's namespace PREFIX.(10+N) on its end of the veth, and `lo` up (its
# epmd and rabbitmqctl use it). Sourced, not run; the script that sources
# it defines `die MESSAGE` (print, exit 1) and sources rabbit-node.sh.
#
# The names are derived from the cluster's directory DIR (H: the first 8
# hex digits of the SHA-1 of its absolute path), so two clusters can exist
# side by side: the bridge tbr-H, node N's namespace tarry-H-N, its veth
# tvHNh (the host's end, on the bridge) and tvHNn (the namespace's end);
# links are at most 15 characters. DIR/netns records them, key=value a line:
#   subnet=PREFIX.0/24 bridge=tbr-H bridge_addr=PREFIX.1
#   nsN=tarry-H-N vethN=tvHNh peerN=tvHNn addrN=PREFIX.(10+N)   (N = 1, 2, 3)
#
# A partition is made of blackhole routes: for node N cut off, one for each
# other node's /32 in N's namespace and one for N's /32 in each other
# node's namespace, so neither side sends the other anything (segments of
# established connections are not sent either: the connections stall, as
# on a cut wire, until net_ticktime or TCP gives up; a new connection fails
# at once, EINVAL). Routes, not a firewall: they need only iproute2, live
# inside the cluster's own namespaces (nothing of the host's is touched),
# and `heal` deletes them all with one flush per namespace. Cut off from the
# clients too: the host's end of N's veth set down (nothing reaches N from
# the host: a new connection times out; N's established connections
# stall).
#
#   net_up DIR              picks the subnet and makes the bridge, namespaces and veths
#   net_down DIR            removes them (and ends what still runs in the namespaces)
#   net_get DIR KEY         a value recorded in DIR/netns
#   net_partition DIR N [clients]   cuts node N off (from the clients too)
#   net_heal DIR            undoes every cut

net_get() {  # DIR KEY -> its value in DIR/netns
  local v
  v=$(sed -n "s/^$2=//p" "$1/netns" 2>/dev/null)
  [ -n "$v" ] || die "no $2 recorded in $1/netns"
  echo "$v"
}

net_hash() { printf '%s' "$1" | sha1sum | cut -c1-8; }  # DIR (absolute) -> H

net_lock_file() {
  if [ -d /run/lock ] && [ -w /run/lock ]; then echo /run/lock/tarry-netns.lock
  else echo "${TMPDIR:-/tmp}/tarry-netns.lock"; fi
}

net_free_prefix() {  # -> PREFIX (10.213.X) of a /24 that no address or route of the host's overlaps
  /usr/bin/python3 - <<'PY'
import ipaddress, random, subprocess
def out(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout
used = []
for line in out("-4", "-o", "addr", "show").splitlines():
    f = line.split()
    if "inet" in f:
        used.append(ipaddress.ip_interface(f[f.index("inet") + 1]).network)
types = {"unicast", "local", "broadcast", "multicast", "blackhole", "unreachable",
         "prohibit", "throw", "nat", "anycast"}
for line in out("-4", "route", "show", "table", "all").splitlines():
    f = line.split()
    if f and f[0] in types:
        f = f[1:]
    if not f or f[0] == "default":
        continue  # the default route overlaps everything and says nothing of use
    try:
        used.append(ipaddress.ip_network(f[0], strict=False))
    except ValueError:
        pass
xs = list(range(1, 255))
random.shuffle(xs)  # two clusters started at once rarely try the same one first
for x in xs:
    net = ipaddress.ip_network(f"10.213.{x}.0/24")
    if not any(net.overlaps(u) for u in used):
        print(f"10.213.{x}")
        break
else:
    raise SystemExit("no free /24 in 10.213.0.0/16")
PY
}

net_names() {  # DIR (absolute) -> the names, key=value a line (no subnet, no addresses)
  local h n; h=$(net_hash "$1")
  echo "bridge=tbr-$h"
  for n in 1 2 3; do
    echo "ns$n=tarry-$h-$n"
    echo "veth$n=tv$h${n}h"
    echo "peer$n=tv$h${n}n"
  done
}

net_leftovers() {  # DIR (absolute) -> prints which of its names exist (a link or a namespace)
  local kv key name
  while IFS= read -r kv; do
    key=${kv%%=*} name=${kv#*=}
    case $key in
      ns*) netns_exists "$name" && echo "network namespace $name" ;;
      peer*) ;;
      *) ip link show "$name" >/dev/null 2>&1 && echo "link $name" ;;
    esac
  done < <(net_names "$1")
  return 0
}

net_up_bridge() {  # DIR -> (holding the lock) picks the subnet, records it, makes the bridge
  local d=$1 prefix n
  prefix=$(net_free_prefix) || return 1
  {
    echo "subnet=$prefix.0/24"
    net_names "$d" | head -n 1
    echo "bridge_addr=$prefix.1"
    net_names "$d" | tail -n +2
    for n in 1 2 3; do echo "addr$n=$prefix.$((10 + n))"; done
  } > "$d/netns"
  ip link add "$(net_get "$d" bridge)" type bridge &&
    ip addr add "$prefix.1/24" dev "$(net_get "$d" bridge)" &&
    ip link set "$(net_get "$d" bridge)" up
}

net_up() {  # DIR (absolute)
  local d=$1 left n ns veth peer addr br
  command -v ip >/dev/null || die "--netns needs the ip command (iproute2: scripts/install-deps)"
  [ "$(id -u)" = 0 ] || die "--netns needs root (network namespaces, links, routes)"
  left=$(net_leftovers "$d")
  [ -z "$left" ] || die "left over from an earlier cluster in $d, not recorded in $d/netns any more: $(paste -sd, - <<<"$left") (remove them: ip netns del NAME, ip link del NAME)"
  # The subnet is picked and taken (the bridge's address) under a lock, so
  # that two clusters starting at once take two.
  ( flock -w 60 9 || { echo "cannot lock $(net_lock_file) within 60 s" >&2; exit 1; }
    net_up_bridge "$d" ) 9>"$(net_lock_file)" || die "could not make the bridge of $d"
  br=$(net_get "$d" bridge)
  for n in 1 2 3; do
    ns=$(net_get "$d" "ns$n") veth=$(net_get "$d" "veth$n") peer=$(net_get "$d" "peer$n")
    addr=$(net_get "$d" "addr$n")
    { ip netns add "$ns" &&
      ip link add "$veth" type veth peer name "$peer" netns "$ns" &&
      ip link set "$veth" master "$br" up &&
      ip -n "$ns" link set lo up &&
      ip -n "$ns" addr add "$addr/24" dev "$peer" &&
      ip -n "$ns" link set "$peer" up; } || die "could not make the network namespace of node $n ($ns)"
  done
}

net_down() {  # DIR (absolute) -> removes what DIR/netns names; exit 0 when nothing of it is left
  local d=$1 n ns veth br rc=0
  [ -f "$d/netns" ] || return 0
  for n in 1 2 3; do
    ns=$(sed -n "s/^ns$n=//p" "$d/netns") veth=$(sed -n "s/^veth$n=//p" "$d/netns")
    if [ -n "$ns" ] && netns_exists "$ns"; then
      netns_kill_all "$ns" || rc=1
      ip netns del "$ns" || { echo "cannot delete network namespace $ns" >&2; rc=1; }
    fi
    # Gone with its namespace's end; deleted here when that end was never moved.
    if [ -n "$veth" ] && ip link show "$veth" >/dev/null 2>&1; then
      ip link del "$veth" 2>/dev/null || true
    fi
  done
  br=$(sed -n "s/^bridge=//p" "$d/netns")
  if [ -n "$br" ] && ip link show "$br" >/dev/null 2>&1; then
    ip link del "$br" || { echo "cannot delete bridge $br" >&2; rc=1; }
  fi
  [ -z "$(net_leftovers "$d")" ] || rc=1
  [ $rc -ne 0 ] || rm -f "$d/netns"
  return $rc
}

net_partition() {  # DIR N [clients]
  local d=$1 n=$2 m ns_n addr_n
  ns_n=$(net_get "$d" "ns$n") addr_n=$(net_get "$d" "addr$n")
  netns_exists "$ns_n" || die "the network namespace $ns_n of node $n is gone (the cluster was stopped)"
  for m in 1 2 3; do
    [ "$m" = "$n" ] && continue
    if ! { ip -n "$ns_n" route replace blackhole "$(net_get "$d" "addr$m")/32" &&
           ip -n "$(net_get "$d" "ns$m")" route replace blackhole "$addr_n/32"; }; then
      die "could not cut node $n off from node $m"
    fi
  done
  if [ "${3:-}" = clients ]; then
    ip link set "$(net_get "$d" "veth$n")" down || die "could not set $(net_get "$d" "veth$n") down"
  fi
}

net_heal() {  # DIR
  local d=$1 n ns rc=0
  for n in 1 2 3; do
    ns=$(net_get "$d" "ns$n")
    netns_exists "$ns" || die "the network namespace $ns of node $n is gone (the cluster was stopped)"
    ip -n "$ns" route flush type blackhole || rc=1
    ip link set "$(net_get "$d" "veth$n")" up || rc=1
  done
  [ $rc -eq 0 ] || die "could not undo every cut"
}
