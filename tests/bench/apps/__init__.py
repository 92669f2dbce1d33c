# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real applications under bwgov (issue 29): Debian's apache2, nginx, caddy
and lighttpd, PostgreSQL 15, MariaDB 10.11, tomcat10 and a parallel build, side by side under unlimited,
static, static + burst, the Koordinator-style comparator and bwgovd. See tests/bench/README.md."""
