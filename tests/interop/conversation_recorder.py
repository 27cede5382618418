"""A loopback TCP relay that records an AMQP conversation, for the
golden-bytes captures (capture_conversation*.py).

    rec = ConversationRecorder(broker_host, broker_port)
    ... point a client at 127.0.0.1:rec.port and talk ...
    rec.save(out_path, "pika")

The relay takes one client connection, forwards it to the broker, and keeps
every chunk it forwards. save() waits for both directions to end and
writes one chunk a line: `C <hex>` (client to server) or `S <hex>` (server
to client), after a comment line naming the client.
"""
import socket
import threading


class ConversationRecorder:
    def __init__(self, host, port):
        self._target = (host, port)
        self._lock = threading.Lock()
        self.records = []
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(1)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._relay)
        self._thread.start()

    def _pump(self, src, dst, tag):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            with self._lock:
                self.records.append((tag, data))
            try:
                dst.sendall(data)
            except OSError:
                return

    def _relay(self):
        client, _ = self._listener.accept()
        server = socket.create_connection(self._target)
        a = threading.Thread(target=self._pump, args=(client, server, "C"))
        b = threading.Thread(target=self._pump, args=(server, client, "S"))
        a.start()
        b.start()
        a.join()
        b.join()

    def save(self, out_path, client_name):
        self._thread.join(timeout=5)
        self._listener.close()
        with open(out_path, "w") as f:
            f.write(f"# AMQP conversation: {client_name} (C) and RabbitMQ (S), "
                    "one forwarded chunk a line\n")
            for tag, data in self.records:
                f.write(f"{tag} {data.hex()}\n")
        total = sum(len(d) for _, d in self.records)
        print(f"{len(self.records)} chunks, {total} bytes -> {out_path}")
