# shellcheck shell=bash
# A private RabbitMQ node whose files all live in one directory: the
# functions scripts/broker and scripts/cluster share. Sourced, not run; the
# script that sources it defines `die MESSAGE` (print, exit 1).
#
# A node directory DIR holds rabbitmq (the version: 3.10, the system's
# package, or 4.0, from a Debian 13 root: scripts/rabbit-root.sh, whose path
# is in rabbitmq-root), port (P: AMQP on 127.0.0.1:P, Erlang
# distribution on P+20000; the node is tarry-P@localhost), .erlang.cookie,
# rabbitmq.conf, advanced.config, enabled_plugins, mnesia/, log/,
# server.out (the server's output), pid (the Erlang VM's, written by the
# server), launcher.pid, erl_crash.dump when its VM crashed and, while the
# node runs, url.
#
# A node in a network namespace (scripts/cluster start --netns; made by
# node_in_netns after node_init) also holds netns (the namespace's name) and
# address (ADDR, its address there): it listens on ADDR:5672 (port says
# 5672), its Erlang distribution on ADDR:25672, it is rabbit@ADDR (long
# names, RABBITMQ_USE_LONGNAME=true for the server and rabbitmqctl alike),
# and it and its rabbitmqctl run with `ip netns exec NS` (4.0: `ip netns
# exec NS chroot ROOT`), so its epmd, which the node starts, is the
# namespace's own.
#
#   node_init DIR [OPTIONS]     makes DIR a fresh node directory (not started)
#   node_in_netns DIR NS ADDR   makes that fresh node one of network namespace NS, on ADDR
#   node_share_cookie DIR FROM  gives DIR's node FROM's Erlang cookie
#   node_launch DIR             runs its node, waits until it is up, prints its URL
#   node_stop DIR               stops it by node name, then by pid
#   node_running DIR            exit 0 when it is running
#   node_ctl DIR ARGS...        rabbitmqctl ARGS against it
#   node_name DIR               its Erlang node name
#   node_url DIR                its AMQP URL (whether it runs or not)
#   node_run DIR PROGRAM ARGS   runs RabbitMQ's PROGRAM (rabbitmqctl, ...) of DIR's version
#                               (for 4.0 inside its root), in DIR's node's environment

RMQ_BIN=/usr/lib/rabbitmq/bin
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/rabbit-root.sh"

# What `deprecated_features.permit.NAME = false` denies on every 4.0 node:
# each feature `rabbitmqctl list_deprecated_features` lists on 4.0.5, so
# that the tests run as 4.3 will (tarry uses none of them).
DENIED_4_0="amqp_address_v1 classic_queue_mirroring global_qos queue_master_locator ram_node_type
  transient_nonexcl_queues"

node_version() { cat "$1/rabbitmq" 2>/dev/null || echo 3.10; }  # DIR -> 3.10 or 4.0

node_root() { cat "$1/rabbitmq-root"; }  # DIR of a 4.0 node -> its root

node_netns() { cat "$1/netns" 2>/dev/null; }  # DIR -> its network namespace; fails for a node on loopback

node_addr() {  # DIR -> the address its node listens on
  if [ -f "$1/netns" ]; then cat "$1/address"; else echo 127.0.0.1; fi
}

node_env() {  # DIR -> exports the environment rabbitmq-server and rabbitmqctl need
  local d=$1 port
  port=$(cat "$d/port")
  export HOME="$d"
  if [ -f "$d/netns" ]; then
    local addr; addr=$(cat "$d/address")
    export RABBITMQ_USE_LONGNAME=true
    export RABBITMQ_NODENAME="rabbit@$addr"
    export RABBITMQ_NODE_IP_ADDRESS="$addr"
    export RABBITMQ_NODE_PORT=5672
    export RABBITMQ_DIST_PORT=25672
  else
    export RABBITMQ_NODENAME="tarry-$port@localhost"
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT="$port"
    export RABBITMQ_DIST_PORT=$((port + 20000))
  fi
  export RABBITMQ_MNESIA_BASE="$d/mnesia"
  export RABBITMQ_LOG_BASE="$d/log"
  export RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$d/advanced.config"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins"
  export RABBITMQ_PID_FILE="$d/pid"
  export RABBITMQ_CONF_ENV_FILE="$d/no-such-env-file"
  export ERL_CRASH_DUMP="$d/erl_crash.dump"  # not in the caller's working directory
}

node_name() {
  if [ -f "$1/netns" ]; then echo "rabbit@$(cat "$1/address")"; else echo "tarry-$(cat "$1/port")@localhost"; fi
}

node_url() { echo "amqp://guest:guest@$(node_addr "$1"):$(cat "$1/port")/%2F"; }

free_port() {  # a port P with P and P+20000 both free on loopback
  /usr/bin/python3 - <<'PY'
import random, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    p = random.randint(20000, 40000)
    if free(p) and free(p + 20000):
        print(p); break
else:
    raise SystemExit("no free port pair found")
PY
}

node_exec() {  # DIR PROGRAM ARGS -> replaces the current (sub)shell by PROGRAM
  local d prog=$2
  d=$(cd "$1" && pwd)  # chroot starts in the root's /: no path may be relative
  shift 2
  node_env "$d"
  local in_ns=()  # a node in a namespace: the program runs there too
  [ -f "$d/netns" ] && in_ns=(ip netns exec "$(node_netns "$d")")
  if [ "$(node_version "$d")" = 4.0 ]; then
    local root; root=$(node_root "$d")
    # Without its mount the root's programs would not see DIR's files.
    root_mounted "$root" "$d" || { echo "the node of $d is not running ($d is not mounted in $root)" >&2; exit 69; }
    exec ${in_ns[@]+"${in_ns[@]}"} chroot "$root" "$RMQ_BIN/$prog" "$@"
  fi
  exec ${in_ns[@]+"${in_ns[@]}"} "$RMQ_BIN/$prog" "$@"
}

node_run() { ( node_exec "$@" ); }

node_ctl() { local d=$1; shift; node_run "$d" rabbitmqctl -n "$(node_name "$d")" "$@"; }

rabbitmq_installed() {  # VERSION -> dies unless that version can run here (a known one, installed)
  case $1 in
    3.10) [ -x "$RMQ_BIN/rabbitmq-server" ] || die "rabbitmq-server is not installed (scripts/install-deps)" ;;
    4.0) root_check "$(root_dir)" ;;
    *) die "unknown RabbitMQ version '$1' (3.10 or 4.0)" ;;
  esac
}

# What tarry recommends for dead_letter_worker_publisher_confirm_timeout
# (docs/reliability.md, "Broker settings"): a quorum queue's at-least-once
# dead-lettering sends a message again after this long without a confirm
# (RabbitMQ's default, 180 s, leaves a wait queue's jobs minutes late after
# a node failure).
DEAD_LETTER_RESEND_MS=10000

# node_init DIR [--rabbitmq 3.10|4.0] [--consumer-timeout-ms N] [--tick-ms N]
#               [--dead-letter-resend-ms N|default] [--tls]
#   Refuses when a node runs in DIR. Picks a free port, writes the
#   configuration and a random Erlang cookie. The options: see scripts/broker.
node_init() {
  local d=$1; shift
  local timeout_ms="" tick_ms="" tls="" version=3.10 root="" resend_ms=$DEAD_LETTER_RESEND_MS
  while [ $# -gt 0 ]; do
    case $1 in
      --consumer-timeout-ms|--tick-ms|--rabbitmq|--dead-letter-resend-ms) [ $# -ge 2 ] || die "$1 needs a value" ;;
    esac
    case $1 in
      --consumer-timeout-ms) timeout_ms=$2; shift 2 ;;
      --tick-ms) tick_ms=$2; shift 2 ;;
      --dead-letter-resend-ms)
        [[ $2 =~ ^[1-9][0-9]*$ || $2 = default ]] || die "--dead-letter-resend-ms takes milliseconds or 'default', not '$2'"
        resend_ms=$2; [ "$2" = default ] && resend_ms=""
        shift 2 ;;
      --rabbitmq) version=$2; shift 2 ;;
      --tls) tls=1; shift ;;
      *) die "unknown option $1" ;;
    esac
  done
  rabbitmq_installed "$version"
  [ "$version" = 4.0 ] && root=$(cd "$(root_dir)" && pwd -P)
  mkdir -p "$d"
  d=$(cd "$d" && pwd)
  if [ -f "$d/port" ] && node_running "$d" 2>/dev/null; then
    die "a node is already running in $d"
  fi
  echo "$version" > "$d/rabbitmq"
  rm -f "$d/netns" "$d/address"
  if [ -n "$root" ]; then echo "$root" > "$d/rabbitmq-root"; else rm -f "$d/rabbitmq-root"; fi
  free_port > "$d/port"
  local port; port=$(cat "$d/port")
  local tls_port=""
  rm -f "$d/tls-url" "$d/tls-port"
  if [ -n "$tls" ]; then
    command -v openssl >/dev/null || die "--tls needs the openssl command (scripts/install-deps)"
    for _ in $(seq 1 20); do
      tls_port=$(free_port)
      [ "$tls_port" != "$port" ] && [ "$tls_port" != $((port + 20000)) ] && break
      tls_port=""
    done
    [ -n "$tls_port" ] || die "no free port for the TLS listener"
    echo "$tls_port" > "$d/tls-port"
    make_tls_files "$d/tls"
  fi
  rm -f "$d/.erlang.cookie"
  head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$d/.erlang.cookie"
  chmod 400 "$d/.erlang.cookie"
  {
    echo "listeners.tcp.default = 127.0.0.1:$port"
    echo "loopback_users = none"
    [ -n "$timeout_ms" ] && echo "consumer_timeout = $timeout_ms"
    if [ "$version" = 4.0 ]; then
      local f
      for f in $DENIED_4_0; do echo "deprecated_features.permit.$f = false"; done
    fi
    if [ -n "$tls" ]; then
      echo "listeners.ssl.default = 127.0.0.1:$tls_port"
      echo "ssl_options.cacertfile = $d/tls/ca.pem"
      echo "ssl_options.certfile = $d/tls/server.pem"
      echo "ssl_options.keyfile = $d/tls/server.key"
      echo "ssl_options.verify = verify_none"
      echo "ssl_options.fail_if_no_peer_cert = false"
    fi
    true
  } > "$d/rabbitmq.conf"
  local rabbit_env=()
  [ -n "$tick_ms" ] && rabbit_env+=("{channel_tick_interval,$tick_ms}")
  [ -n "$resend_ms" ] && rabbit_env+=("{dead_letter_worker_publisher_confirm_timeout,$resend_ms}")
  if [ ${#rabbit_env[@]} -gt 0 ]; then
    echo "[{rabbit,[$(IFS=,; echo "${rabbit_env[*]}")]}]." > "$d/advanced.config"
  else
    echo "[]." > "$d/advanced.config"
  fi
  echo "[]." > "$d/enabled_plugins"
}

node_in_netns() {  # DIR NS ADDR -> the fresh node of DIR (node_init) runs in namespace NS, on ADDR
  local d=$1 ns=$2 addr=$3
  echo 5672 > "$d/port"
  echo "$addr" > "$d/address"
  echo "$ns" > "$d/netns"
  sed -i "s/^listeners\.tcp\.default = .*/listeners.tcp.default = $addr:5672/" "$d/rabbitmq.conf"
  grep -qxF "listeners.tcp.default = $addr:5672" "$d/rabbitmq.conf" || die "could not set the listener of $d to $addr"
}

netns_exists() { ip netns pids "$1" >/dev/null 2>&1; }  # NS -> exit 0 when that namespace exists

netns_kill_all() {  # NS -> ends every process in network namespace NS (by pid; TERM, then KILL)
  local ns=$1 pids
  netns_exists "$ns" || return 0
  pids=$(ip netns pids "$ns" 2>/dev/null) || return 0
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086  # a list of pids
  kill $pids 2>/dev/null || true
  for _ in $(seq 1 50); do
    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  pids=$(ip netns pids "$ns" 2>/dev/null) || return 0
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  for _ in $(seq 1 50); do
    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "processes still run in network namespace $ns: $(ip netns pids "$ns" | tr '\n' ' ')" >&2
  return 1
}

node_share_cookie() {  # DIR FROM -> DIR's node gets FROM's Erlang cookie (one cluster, one cookie)
  rm -f "$1/.erlang.cookie"
  cp "$2/.erlang.cookie" "$1/.erlang.cookie"
  chmod 400 "$1/.erlang.cookie"
}

node_boot() {  # DIR -> runs its node and waits until it is up (0) or has exited (1); dies after 90 s
  local d=$1
  rm -f "$d/pid"
  ( node_exec "$d" rabbitmq-server ) >> "$d/server.out" 2>&1 < /dev/null &
  echo $! > "$d/launcher.pid"
  local deadline=$((SECONDS + 90))
  until node_ctl "$d" await_startup --timeout 60 >/dev/null 2>&1; do
    kill -0 "$(cat "$d/launcher.pid")" 2>/dev/null || return 1
    [ $SECONDS -lt $deadline ] || { node_stop "$d"; die "node in $d did not start within 90 s"; }
    sleep 1
  done
}

node_launch() {  # DIR -> runs the node whose files are in DIR, waits until it is up, prints its URL
  local d=$1 tls_port="" attempt from
  [ -f "$d/tls-port" ] && tls_port=$(cat "$d/tls-port")
  if [ -f "$d/netns" ]; then
    netns_exists "$(node_netns "$d")" ||
      die "the network namespace $(node_netns "$d") of the node in $d is gone (its cluster was stopped)"
    # The node starts the namespace's own epmd; not the host's.
    if [ "$(node_version "$d")" = 4.0 ]; then root_enter "$(node_root "$d")" "$d" own-epmd; fi
  elif [ "$(node_version "$d")" = 4.0 ]; then
    root_enter "$(node_root "$d")" "$d"
  fi
  for attempt in 1 2 3; do
    from=$(($(stat -c %s "$d/server.out" 2>/dev/null || echo 0) + 1))
    node_boot "$d" && break
    # RabbitMQ 4.0.5 sometimes fails its boot with existing data when a
    # deprecated feature is denied: its check whether transient non-exclusive
    # queues are in use reads Mnesia's rabbit_queue table before the table
    # is loaded (no_exists), takes the failure for "in use" and stops
    # (failed_to_deny_deprecated_features). A boot once more gets past it.
    if [ "$attempt" -lt 3 ] && [ "$(node_version "$d")" = 4.0 ] &&
       tail -c +"$from" "$d/server.out" | grep -q failed_to_deny_deprecated_features; then
      echo "$(basename "$0"): the node in $d failed RabbitMQ 4.0.5's boot-time check of its denied deprecated features (a race in the broker); booting it again" >&2
      continue
    fi
    tail -n 30 "$d/server.out" >&2 || true
    node_stop "$d"
    die "node in $d exited during start-up"
  done
  if [ -n "$tls_port" ]; then
    # The node is booted; its TLS listener must accept connections too.
    local up=""
    for _ in $(seq 1 50); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null; then up=1; break; fi
      sleep 0.2
    done
    [ -n "$up" ] || { node_stop "$d"; die "node in $d does not listen for TLS on port $tls_port"; }
    echo "amqps://guest:guest@localhost:$tls_port/%2F" > "$d/tls-url"
  fi
  node_url "$d" > "$d/url"
  cat "$d/url"
}

make_tls_files() {  # DIR -> a throwaway CA and a server certificate for localhost in DIR
  local t=$1
  rm -rf "$t"
  mkdir -p "$t"
  cat > "$t/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  local log="$t/openssl.log"
  {
    openssl req -x509 -config "$t/openssl.cnf" -extensions ca_ext -newkey rsa:2048 -nodes \
      -days 2 -subj "/CN=tarry throwaway test CA" -keyout "$t/ca.key" -out "$t/ca.pem" &&
    openssl req -new -config "$t/openssl.cnf" -newkey rsa:2048 -nodes \
      -subj "/CN=localhost" -keyout "$t/server.key" -out "$t/server.csr" &&
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial \
      -days 2 -extfile "$t/openssl.cnf" -extensions server_ext -out "$t/server.pem"
  } > "$log" 2>&1 || { cat "$log" >&2; die "could not make the TLS certificates in $t"; }
  chmod 600 "$t/ca.key" "$t/server.key"
  chmod 644 "$t/ca.pem" "$t/server.pem"
}

node_stop() {  # DIR -> stops its node by node name, then by pid; harmless when it is down
  local d=$1
  [ -f "$d/port" ] || return 0
  node_ctl "$d" stop >/dev/null 2>&1 || true
  local pid
  for f in "$d/pid" "$d/launcher.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    [ -n "$pid" ] || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  done
  rm -f "$d/url" "$d/tls-url"
  # A node in a namespace leaves its epmd there (and from a 4.0 root).
  [ -f "$d/netns" ] && { netns_kill_all "$(node_netns "$d")" || true; }
  if [ "$(node_version "$d")" = 4.0 ]; then
    root_leave "$(node_root "$d")" "$(cd "$d" && pwd)" "$(node_name "$d")" ||
      die "the node of $d stopped, but its root was not left clean"
  fi
}

node_running() {  # DIR -> exit 0 when its node is running
  local d=$1
  [ -f "$d/port" ] || return 1
  node_ctl "$d" status >/dev/null 2>&1
}
