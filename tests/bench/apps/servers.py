# SPDX-License-Identifier: LGPL-2.1-or-later
"""The real, packaged servers of the application benchmarks, each started by
the harness inside a benchmark cgroup (its processes only), with its data in a
temporary directory, and stopped again (gracefully first, then every process
left in the cgroup killed): Debian's apache2 (mod_deflate), nginx (gzip),
caddy (encode gzip) and lighttpd (mod_deflate), PostgreSQL 15, MariaDB 10.11
and tomcat10 with its examples. Nothing is installed as a service, nothing is
left running. Each server runs as its package's own user (www-data, caddy,
postgres, mysql, tomcat), as it would in production."""

import os
import pwd
import shutil
import socket
import subprocess
import time

from harness import cgroup as cgmod

APACHE = "/usr/sbin/apache2"
APACHE_MODULES = "/usr/lib/apache2/modules"
NGINX = "/usr/sbin/nginx"
CADDY = "/usr/bin/caddy"
LIGHTTPD = "/usr/sbin/lighttpd"
LIGHTTPD_DEFLATE = "/usr/lib/lighttpd/mod_deflate.so"
PG_BIN = "/usr/lib/postgresql/15/bin"
MARIADBD = "/usr/sbin/mariadbd"
TOMCAT_HOME = "/usr/share/tomcat10"
TOMCAT_CONF = "/etc/tomcat10"
TOMCAT_EXAMPLES = "/usr/share/tomcat10-examples/examples"


def free_port():
    """A TCP port on the loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout, alive=None):
    """Until something accepts on 127.0.0.1:port; False on timeout or when
    alive() says the server died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def http_get(port, path, timeout=30.0, headers=None):
    """One GET on a fresh connection: (status, body bytes) or (None, error)."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        return r.status, len(body)
    except (OSError, http.client.HTTPException) as e:
        return None, str(e)
    finally:
        c.close()


def user_ids(name):
    pw = pwd.getpwnam(name)
    return pw.pw_uid, pw.pw_gid


def chown_tree(path, uid, gid):
    for d, dirs, files in os.walk(path):
        os.chown(d, uid, gid)
        for f in files:
            os.lchown(os.path.join(d, f), uid, gid)


def spawn_as(cg, user, argv, env=None, cwd=None, **kw):
    """Starts argv inside cg (moved in before exec) as user, in a session of
    its own so that a signal to the harness's group never reaches it."""
    uid, gid = user_ids(user)

    def enter():
        cg._enter()
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    p = subprocess.Popen(argv, preexec_fn=enter, env=env, cwd=cwd, start_new_session=True, **kw)
    cg.procs.append(p)
    return p


def cgroup_pids(cg):
    try:
        with open(os.path.join(cg.bw_dir, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Server:
    """A server in a benchmark cgroup. start() returns once it answers;
    stop() asks it to shut down (term_signal to its main process), waits,
    then kills whatever is left in the cgroup."""

    name = "server"
    term_signal = 15
    user = "root"

    def __init__(self, workdir):
        self.workdir = workdir
        self.proc = None
        self.cg = None
        self.port = None
        self.log_path = None
        self.t_spawn = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=20.0):
        """Returns the warnings (processes that had to be killed)."""
        warnings = []
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(self.term_signal)
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                warnings.append(f"{self.name} did not stop within {timeout:g} s of signal {self.term_signal}")
            except ProcessLookupError:
                pass
        if self.cg is not None:
            left = cgroup_pids(self.cg)
            if left:
                left = cgmod.kill_cgroup(self.cg)
                if left:
                    warnings.append(f"{self.name}: processes left in {self.cg.name}: {left}")
        if self.proc is not None:
            cgmod.kill_and_reap(self.proc, timeout=5)
        self.proc = None
        return warnings

    def log_tail(self, n=5):
        try:
            with open(self.log_path, errors="replace") as f:
                return " | ".join(f.read().splitlines()[-n:])
        except (OSError, TypeError):
            return ""


# ---- Apache httpd with mod_deflate --------------------------------------------

APACHE_CONF = """# bwgov application benchmark: Debian's apache2, mpm_event, mod_deflate
LoadModule mpm_event_module {mods}/mod_mpm_event.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule mime_module {mods}/mod_mime.so
LoadModule filter_module {mods}/mod_filter.so
LoadModule deflate_module {mods}/mod_deflate.so
ServerName localhost
Listen 127.0.0.1:{port}
PidFile {dir}/httpd.pid
ErrorLog {dir}/logs/error.log
DocumentRoot {dir}/htdocs
DefaultRuntimeDir {dir}/run
User www-data
Group www-data
TypesConfig /etc/mime.types
KeepAliveTimeout 60
MaxKeepAliveRequests 0
<Directory {dir}/htdocs>
    Require all granted
</Directory>
AddOutputFilterByType DEFLATE text/plain
"""


def text_file(path, size, seed=1):
    """size bytes of English-like text (words of a seeded vocabulary, lines
    of 8-14 words): gzip takes it to about half, as it does log files and
    HTML without markup."""
    import random
    r = random.Random(seed)
    words = ["".join(r.choice("etaoinshrdlucmfwypvbgkjqxz"[:r.randint(8, 26)])
                     for _ in range(r.randint(2, 9))) for _ in range(5000)]
    out, n = [], 0
    while n < size:
        line = " ".join(r.choice(words) for _ in range(r.randint(8, 14))) + "\n"
        out.append(line)
        n += len(line)
    with open(path, "w") as f:
        f.write("".join(out)[:size])


class Apache(Server):
    """apache2 -DFOREGROUND with a configuration of its own (mpm_event,
    mod_deflate on text/plain), serving a 1 MB text file."""

    name = "apache2"
    term_signal = 28            # SIGWINCH: graceful stop
    user = "root"               # the parent binds and drops to www-data itself
    FILE = "/big.txt"
    FILE_BYTES = 1 << 20

    def prepare(self):
        os.makedirs(os.path.join(self.workdir, "htdocs"), exist_ok=True)
        os.makedirs(os.path.join(self.workdir, "run"), exist_ok=True)
        os.makedirs(os.path.join(self.workdir, "logs"), exist_ok=True)
        text_file(os.path.join(self.workdir, "htdocs", self.FILE.lstrip("/")), self.FILE_BYTES)
        uid, gid = user_ids("www-data")
        os.chown(os.path.join(self.workdir, "logs"), uid, gid)

    def argv(self):
        """Writes the configuration for self.port; the command line."""
        conf = os.path.join(self.workdir, "httpd.conf")
        with open(conf, "w") as f:
            f.write(APACHE_CONF.format(mods=APACHE_MODULES, port=self.port, dir=self.workdir))
        return [APACHE, "-f", conf, "-DFOREGROUND"]

    def spawn(self, cg, argv, log):
        return cg.spawn(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def start(self, cg, timeout=30.0):
        self.cg = cg
        self.port = free_port()
        argv = self.argv()
        self.log_path = os.path.join(self.workdir, "logs", "stderr.log")
        self.t_spawn = time.monotonic()
        with open(self.log_path, "w") as log:
            self.proc = self.spawn(cg, argv, log)
        if not wait_port(self.port, timeout, self.alive):
            raise RuntimeError(f"{self.name} did not start: {self.log_tail()}")
        st, n = http_get(self.port, self.FILE, headers={"Accept-Encoding": "gzip"})
        if st != 200:
            raise RuntimeError(f"{self.name} answered {st} ({n})")
        return self

    def url(self):
        return f"http://127.0.0.1:{self.port}{self.FILE}"


# ---- nginx with gzip ------------------------------------------------------------------

# Debian's nginx as its own nginx.conf sets it up where it matters here: one
# worker per CPU, epoll, sendfile, gzip at its default level (1). Only the
# paths are the run's own.
NGINX_CONF = """# bwgov application benchmark: Debian's nginx, gzip on text/plain
daemon off;
master_process on;
user www-data;
worker_processes auto;
pid {dir}/nginx.pid;
error_log {dir}/logs/error.log warn;
events {{ worker_connections 768; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    access_log off;
    gzip on;
    gzip_types text/plain;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {dir}/htdocs;
    }}
}}
"""


class Nginx(Apache):
    """nginx with `daemon off` (its master in the foreground, one worker per
    CPU as www-data) and gzip on text/plain, serving the same 1 MB text file
    as Apache: a second web server, event-driven where apache2's mpm_event
    hands each request to a thread."""

    name = "nginx"
    term_signal = 3             # SIGQUIT: graceful stop

    def prepare(self):
        super().prepare()
        os.makedirs(os.path.join(self.workdir, "tmp"), exist_ok=True)

    def argv(self):
        conf = os.path.join(self.workdir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(port=self.port, dir=self.workdir))
        return [NGINX, "-c", conf, "-p", self.workdir, "-e", os.path.join(self.workdir, "logs", "error.log")]


# ---- Caddy with encode gzip --------------------------------------------------------

# Debian's caddy, a Go server: its Caddyfile's file_server with `encode gzip`
# at Caddy's default level; the admin endpoint and automatic HTTPS off, its
# storage (and the configuration it saves) in the run's directory.
CADDYFILE = """# bwgov application benchmark: Debian's caddy, encode gzip
{{
    admin off
    auto_https off
    storage file_system {dir}/data
}}
http://127.0.0.1:{port} {{
    root * {dir}/htdocs
    encode gzip
    file_server
}}
"""


class Caddy(Apache):
    """`caddy run` with a Caddyfile of its own, as the package's caddy user,
    serving the same 1 MB text file gzip-compressed: a third web server, in
    Go, whose runtime runs one scheduler thread per CPU and a garbage
    collector of its own beside the requests."""

    name = "caddy"
    term_signal = 2             # SIGINT: graceful stop
    user = "caddy"

    def prepare(self):
        super().prepare()
        os.makedirs(os.path.join(self.workdir, "data"), exist_ok=True)
        chown_tree(os.path.join(self.workdir, "data"), *user_ids(self.user))

    def argv(self):
        conf = os.path.join(self.workdir, "Caddyfile")
        with open(conf, "w") as f:
            f.write(CADDYFILE.format(port=self.port, dir=self.workdir))
        return [CADDY, "run", "--config", conf, "--adapter", "caddyfile"]

    def spawn(self, cg, argv, log):
        data = os.path.join(self.workdir, "data")
        env = {"PATH": "/usr/bin:/bin", "HOME": data, "XDG_CONFIG_HOME": data, "XDG_DATA_HOME": data}
        return spawn_as(cg, self.user, argv, env=env, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT)


# ---- lighttpd with mod_deflate ----------------------------------------------------

# Debian's lighttpd as its lighttpd.conf sets it up where it matters here: one
# process, one thread (server.max-worker 0), mod_deflate on text/plain at
# zlib's default level, no cache of what it compressed, keep-alive (its
# default of 1000 requests a connection, more than a run sends on one: 0
# would turn keep-alive off, where apache2's MaxKeepAliveRequests 0 means no
# limit). Only the paths and the port are the run's own.
LIGHTTPD_CONF = """# bwgov application benchmark: Debian's lighttpd, mod_deflate
server.modules = ("mod_deflate")
server.document-root = "{dir}/htdocs"
server.bind = "127.0.0.1"
server.port = {port}
server.username = "www-data"
server.groupname = "www-data"
server.errorlog = "{dir}/logs/error.log"
server.pid-file = "{dir}/run/lighttpd.pid"
server.max-keep-alive-requests = 1000
server.max-keep-alive-idle = 65
mimetype.assign = (".txt" => "text/plain")
deflate.mimetypes = ("text/plain")
deflate.allowed-encodings = ("gzip", "deflate")
"""


class Lighttpd(Apache):
    """lighttpd -D (in the foreground, dropping to www-data itself) with
    mod_deflate on text/plain, serving the same 1 MB text file: a fourth
    web server, a single-threaded event loop, so that it never uses more
    than one CPU whatever its quota."""

    name = "lighttpd"
    term_signal = 2             # SIGINT: graceful stop

    def argv(self):
        conf = os.path.join(self.workdir, "lighttpd.conf")
        with open(conf, "w") as f:
            f.write(LIGHTTPD_CONF.format(port=self.port, dir=self.workdir))
        return [LIGHTTPD, "-D", "-f", conf]


# ---- PostgreSQL 15 ------------------------------------------------------------

class TemplateServer(Server):
    """A database server that runs on a fresh copy of a template made once
    (prepare()), so that each run starts from the same data. A subclass
    gives _spawn(cg, datadir) and _ready(timeout)."""

    stop_timeout = 20.0

    def start(self, cg, timeout=60.0):
        """A fresh copy of the template, the server on it."""
        self.cg = cg
        self.data = os.path.join(self.workdir, "data")
        shutil.rmtree(self.data, ignore_errors=True)
        subprocess.run(["cp", "-a", self.template, self.data], check=True)
        self.port = free_port()
        self.t_spawn = time.monotonic()
        self.proc = self._spawn(cg, self.data)
        self._ready(timeout)
        return self

    def stop(self, timeout=None):
        w = super().stop(self.stop_timeout if timeout is None else timeout)
        if self.data:
            shutil.rmtree(self.data, ignore_errors=True)
            self.data = None
        return w


class Postgres(TemplateServer):
    """A cluster made once with initdb and `pgbench -i -s SCALE` (prepare(),
    in a cgroup of its own), then copied afresh for every run, so that each
    run starts from the same data; the server listens on the loopback and a
    socket directory of its own. Data on tmpfs (/dev/shm) when there is one:
    the benchmark is about CPU, not the disk of a shared machine."""

    name = "postgres"
    term_signal = 2             # SIGINT: fast shutdown
    user = "postgres"

    def __init__(self, workdir, scale=20):
        super().__init__(workdir)
        self.scale = scale
        self.template = os.path.join(workdir, "template")
        self.data = None
        self.sockdir = os.path.join(workdir, "sock")
        self.init_s = None

    def _spawn(self, cg, data):
        self.log_path = os.path.join(self.workdir, "postgres.log")
        argv = [os.path.join(PG_BIN, "postgres"), "-D", data, "-c", f"port={self.port}",
                "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.sockdir}",
                "-c", "logging_collector=off"]
        with open(self.log_path, "a") as log:
            return spawn_as(cg, self.user, argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)

    def prepare(self, cg):
        """initdb and pgbench -i in cg (an unlimited setup cgroup)."""
        uid, gid = user_ids(self.user)
        os.makedirs(self.sockdir, exist_ok=True)
        os.chown(self.sockdir, uid, gid)
        os.chown(self.workdir, uid, gid)
        t = time.monotonic()
        p = spawn_as(cg, self.user, [os.path.join(PG_BIN, "initdb"), "-D", self.template, "-U", "postgres",
                                     "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=self.workdir)
        out, _ = p.communicate(timeout=300)
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed: {out[-500:]}")
        self.cg = cg
        self.port = free_port()
        self.proc = self._spawn(cg, self.template)
        self._ready(60)
        for argv in (["createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "bench"],
                     ["pgbench", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-i", "-q",
                      "-s", str(self.scale), "bench"],
                     ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q", "-c",
                      "VACUUM ANALYZE", "-c", "CHECKPOINT", "bench"]):
            r = subprocess.run([os.path.join(PG_BIN, argv[0])] + argv[1:], capture_output=True, text=True,
                               timeout=900)
            if r.returncode != 0:
                raise RuntimeError(f"{argv[0]} failed: {r.stderr[-500:]}")
        self.stop()
        self.init_s = time.monotonic() - t

    def _ready(self, timeout):
        if not wait_port(self.port, timeout, self.alive):
            raise RuntimeError(f"postgres did not start: {self.log_tail()}")
        # Ready for queries, not only listening (recovery done).
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run([os.path.join(PG_BIN, "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                               capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("postgres did not become ready")


# ---- MariaDB 10.11 ------------------------------------------------------------

class MariaDb(TemplateServer):
    """Debian's MariaDB 10.11 (mariadbd, InnoDB, one thread per connection),
    with none of the package's configuration (--no-defaults) but a 256 MiB
    buffer pool that holds the data. As for PostgreSQL: a template made once
    (mariadb-install-db, then `sysbench oltp_common prepare`, in a cgroup of
    its own) and copied afresh for every run, data on tmpfs when there is
    one. The server listens on the loopback and on a socket of its own; the
    grant tables are skipped, as nothing but the benchmark can reach it."""

    name = "mariadb"
    user = "mysql"
    stop_timeout = 30.0
    TABLES, TABLE_SIZE = 4, 50000

    def __init__(self, workdir):
        super().__init__(workdir)
        self.template = os.path.join(workdir, "template")
        self.data = None
        self.sock = os.path.join(workdir, "mysqld.sock")
        self.init_s = None

    def _spawn(self, cg, data):
        self.log_path = os.path.join(self.workdir, "mariadb.log")
        argv = [MARIADBD, "--no-defaults", f"--datadir={data}", f"--socket={self.sock}", f"--port={self.port}",
                "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin", "--innodb-buffer-pool-size=256M",
                f"--pid-file={os.path.join(self.workdir, 'mariadbd.pid')}", f"--log-error={self.log_path}"]
        return spawn_as(cg, self.user, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.workdir)

    def _ready(self, timeout):
        if not wait_port(self.port, timeout, self.alive):
            raise RuntimeError(f"mariadbd did not start: {self.log_tail()}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run(["mariadb-admin", f"--socket={self.sock}", "-u", "root", "ping"], capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("mariadbd did not answer a ping")

    def sysbench_args(self):
        """What every sysbench call against this server says."""
        return ["--db-driver=mysql", f"--mysql-socket={self.sock}", "--mysql-user=root", "--mysql-db=sbtest",
                f"--tables={self.TABLES}", f"--table-size={self.TABLE_SIZE}"]

    def prepare(self, cg):
        """mariadb-install-db and sysbench's tables in cg (an unlimited setup cgroup)."""
        uid, gid = user_ids(self.user)
        os.chown(self.workdir, uid, gid)
        t = time.monotonic()
        p = spawn_as(cg, self.user, ["mariadb-install-db", "--no-defaults", f"--datadir={self.template}",
                                     "--auth-root-authentication-method=normal", "--skip-test-db",
                                     "--skip-name-resolve"],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=self.workdir)
        out, _ = p.communicate(timeout=300)
        if p.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {out[-500:]}")
        self.cg = cg
        self.port = free_port()
        self.proc = self._spawn(cg, self.template)
        self._ready(60)
        for argv in (["mariadb", f"--socket={self.sock}", "-u", "root", "-e", "CREATE DATABASE sbtest"],
                     ["sysbench", "oltp_common"] + self.sysbench_args() + ["prepare"]):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                raise RuntimeError(f"{argv[0]} failed: {(r.stderr or r.stdout)[-500:]}")
        self.stop()
        self.init_s = time.monotonic() - t



# ---- Tomcat 10 with its examples ------------------------------------------------

class Tomcat(Server):
    """Tomcat 10 (Debian's tomcat10 and tomcat10-examples) in a CATALINA_BASE of
    its own (conf copied from /etc/tomcat10, the HTTP connector on a free
    port, no shutdown port, the examples context), started as Debian's unit
    starts it (Bootstrap start, run as tomcat), with a fresh work directory
    every run: Jasper compiles each JSP anew. jvm_opts: extra JVM options."""

    name = "tomcat10"
    user = "tomcat"
    SERVLET = "/examples/servlets/servlet/HelloWorldExample"
    JSP = "/examples/jsp/jsp2/el/basic-arithmetic.jsp"
    LOAD_PATH = "/examples/jsp/jsp2/el/basic-arithmetic.jsp"

    def __init__(self, workdir, jvm_opts=()):
        super().__init__(workdir)
        self.jvm_opts = list(jvm_opts)
        self.startup_line_s = None
        self.startup_reported_ms = None

    def _base(self):
        b = os.path.join(self.workdir, "base")
        shutil.rmtree(b, ignore_errors=True)
        for d in ("conf/Catalina/localhost", "logs", "work", "temp", "webapps"):
            os.makedirs(os.path.join(b, d))
        for f in os.listdir(TOMCAT_CONF):
            src = os.path.join(TOMCAT_CONF, f)
            if os.path.isfile(src):
                shutil.copy(src, os.path.join(b, "conf", f))
        with open(os.path.join(b, "conf", "server.xml")) as f:
            xml = f.read()
        xml = xml.replace('<Server port="8005"', '<Server port="-1"').replace('port="8080"', f'port="{self.port}"')
        with open(os.path.join(b, "conf", "server.xml"), "w") as f:
            f.write(xml)
        with open(os.path.join(b, "conf", "Catalina", "localhost", "examples.xml"), "w") as f:
            f.write(f'<Context path="/examples" docBase="{TOMCAT_EXAMPLES}">\n'
                    '  <Resources allowLinking="true"/>\n</Context>\n')
        uid, gid = user_ids(self.user)
        chown_tree(b, uid, gid)
        return b

    def start(self, cg, timeout=300.0):
        """Spawns the JVM; returns at once (the caller times the start-up:
        wait_startup_line(), first_ok())."""
        self.cg = cg
        self.port = free_port()
        b = self._base()
        self.log_path = os.path.join(self.workdir, "catalina.out")
        argv = ["java"] + self.jvm_opts + [
            f"-Dcatalina.base={b}", f"-Dcatalina.home={TOMCAT_HOME}", f"-Djava.io.tmpdir={b}/temp",
            f"-Djava.util.logging.config.file={b}/conf/logging.properties",
            "-Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager",
            "-classpath", f"{TOMCAT_HOME}/bin/bootstrap.jar:{TOMCAT_HOME}/bin/tomcat-juli.jar",
            "org.apache.catalina.startup.Bootstrap", "start"]
        self.t_spawn = time.monotonic()
        log = open(self.log_path, "w")
        try:
            self.proc = spawn_as(cg, self.user, argv, stdout=log, stderr=subprocess.STDOUT, cwd=b)
        finally:
            log.close()
        return self

    def startup_line(self):
        """Seconds from spawn to "Server startup in [N] milliseconds" in its
        log (when the harness saw it) and N, or (None, None)."""
        import re
        try:
            with open(self.log_path, errors="replace") as f:
                m = re.search(r"Server startup in \[?([0-9,]+)\]? ?(?:ms|milliseconds)", f.read())
        except OSError:
            return None, None
        if m:
            return True, int(m.group(1).replace(",", ""))
        return None, None
