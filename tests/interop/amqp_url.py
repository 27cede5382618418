"""An AMQP URL taken apart for the Python clients of the interop scripts."""
import urllib.parse


def url_parts(url):
    """(host, port, vhost, user, password) of amqp://USER:PASS@HOST:PORT/VHOST,
    with RabbitMQ's defaults for what the URL leaves out."""
    u = urllib.parse.urlparse(url)
    vhost = urllib.parse.unquote(u.path[1:]) if len(u.path) > 1 else "/"
    return (u.hostname or "localhost", u.port or 5672, vhost,
            urllib.parse.unquote(u.username or "guest"), urllib.parse.unquote(u.password or "guest"))
