/* Baseline for bench/consumer_bench (T, throughput): rabbitmq-c (Debian's
 * librabbitmq), the C client, consuming a queue the benchmark filled
 * beforehand as fast as it can: the C ceiling, no scheduling.
 *
 *     rabbitmq_c_consume AMQP_URL QUEUE MESSAGES PREFETCH
 *
 * basic.consume with manual acks, one basic.ack per delivery, the given
 * prefetch; the rate is measured from the first delivery to the last ack,
 * as for tarry's raw loop and pika. Prints one JSON line:
 * {"consume_ack_per_s": ...}; exits 1 with the reason on stderr. */
#include <amqp.h>
#include <amqp_tcp_socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int failed(const char *what, amqp_rpc_reply_t r) {
    if (r.reply_type == AMQP_RESPONSE_NORMAL) return 0;
    fprintf(stderr, "rabbitmq_c_consume: %s failed (reply type %d)\n", what, (int)r.reply_type);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: rabbitmq_c_consume AMQP_URL QUEUE MESSAGES PREFETCH\n");
        return 2;
    }
    char *url = strdup(argv[1]);
    const char *queue = argv[2];
    const long n = atol(argv[3]);
    const int prefetch = atoi(argv[4]);
    struct amqp_connection_info info;
    amqp_default_connection_info(&info);
    if (amqp_parse_url(url, &info) != AMQP_STATUS_OK) {
        fprintf(stderr, "rabbitmq_c_consume: not an AMQP URL: %s\n", argv[1]);
        return 1;
    }
    amqp_connection_state_t conn = amqp_new_connection();
    amqp_socket_t *socket = amqp_tcp_socket_new(conn);
    if (!socket || amqp_socket_open(socket, info.host, info.port) != AMQP_STATUS_OK) {
        fprintf(stderr, "rabbitmq_c_consume: cannot connect to %s:%d\n", info.host, info.port);
        return 1;
    }
    if (failed("login", amqp_login(conn, info.vhost, 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, info.user,
                                   info.password)))
        return 1;
    amqp_channel_open(conn, 1);
    if (failed("channel.open", amqp_get_rpc_reply(conn))) return 1;
    amqp_basic_qos(conn, 1, 0, (uint16_t)prefetch, 0);
    if (failed("basic.qos", amqp_get_rpc_reply(conn))) return 1;
    amqp_basic_consume(conn, 1, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
    if (failed("basic.consume", amqp_get_rpc_reply(conn))) return 1;

    double first = 0, last = 0;
    for (long got = 0; got < n;) {
        amqp_envelope_t envelope;
        amqp_maybe_release_buffers(conn);
        struct timeval limit = {60, 0};
        amqp_rpc_reply_t r = amqp_consume_message(conn, &envelope, &limit, 0);
        if (failed("consuming", r)) return 1;
        if (got == 0) first = now_s();
        if (amqp_basic_ack(conn, 1, envelope.delivery_tag, 0) != AMQP_STATUS_OK) {
            fprintf(stderr, "rabbitmq_c_consume: basic.ack failed\n");
            return 1;
        }
        amqp_destroy_envelope(&envelope);
        ++got;
        last = now_s();
    }
    amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS);
    amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(conn);
    free(url);
    printf("{\"consume_ack_per_s\": %.1f}\n", (double)n / (last - first));
    return 0;
}
