/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The journal of state.json: one line per save of a few entries
 * (contracts in include/bwgov/state/state-journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwgov/util/fileio.h"
#include "bwgov/util/macro.h"
#include "bwgov/state/state.h"
#include "bwgov/util/util.h"
#include "state-internal.h"
#include "bwgov/state/state-journal.h"

int bw_state_journal_format(struct bw_state *s, char **ret) {
        struct state_doc o = { .fd = -1 };
        char head[64];
        size_t n = 0;
        int r;

        *ret = NULL;
        s->changed = 0;
        for (size_t i = 0; i < s->n_units; i++) {
                (void) state_refresh(s, &s->units[i]);
                n += !s->units[i].saved;
        }
        if (n == 0 && s->n_forgotten == 0)
                return 0;

        (void) snprintf(head, sizeof(head), "{\"generation\":%" PRIu64 ",\"forget\":[", s->generation);
        r = state_doc_put(&o, head, strlen(head));
        for (size_t i = 0; i < s->n_forgotten && r >= 0; i++) {
                _cleanup_free_ char *q = state_quote(s->forgotten[i]);

                if (!q)
                        r = -EINVAL;
                if (r >= 0 && i > 0)
                        r = state_doc_put(&o, ",", 1);
                if (r >= 0)
                        r = state_doc_put(&o, q, strlen(q));
        }
        if (r >= 0)
                r = state_doc_put(&o, "],\"units\":{", strlen("],\"units\":{"));
        for (size_t i = 0, k = 0; i < s->n_units && r >= 0; i++) {
                if (s->units[i].saved)
                        continue;
                if (k++ > 0)
                        r = state_doc_put(&o, ",", 1);
                if (r >= 0)
                        r = state_doc_put_unit(&o, &s->units[i]);
        }
        if (r >= 0)
                r = state_doc_put(&o, "}}\n", 3);
        if (r < 0) {
                free(o.buf);
                return r;
        }
        *ret = o.buf;
        return 0;
}

int bw_state_journal_append(int dirfd, const char *name, struct bw_state *s) {
        _cleanup_free_ char *line = NULL;
        _cleanup_close_ int fd = -1;
        size_t len, done = 0;
        struct stat st;
        int r;

        r = bw_state_journal_format(s, &line);
        if (r < 0 || !line)
                return r;
        len = strlen(line);

        /* Never blocking in open(), never through a symlink: as the file. */
        fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        while (done < len) {
                ssize_t k = write(fd, line + done, len - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -EIO;
                        goto fail;
                }
                done += (size_t) k;
        }
        if (fdatasync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (st.st_size == 0)
                (void) fsync(dirfd);    /* a new file: its name too */
        return (int) u64_min(len, INT_MAX);
fail:
        /* A line cut short in the middle of the journal would hide the
         * lines after it: cut back to the lines before. Whether or not that
         * works, the caller saves the whole state.json instead, which
         * removes the journal. */
        if (ftruncate(fd, st.st_size) < 0)
                return r;       /* said for -Wunused-result: r is the first error */
        return r;
}

/* One line: its names forgotten, then its entries in place of the ones of
 * the same name, whole. A line with a bad entry changes nothing. */
static int journal_apply(struct bw_state *s, json_t *line) {
        json_t *forget = json_object_get(line, "forget"), *units = json_object_get(line, "units"), *v;
        _cleanup_(bw_state_done) struct bw_state check = {0};
        const char *name;
        size_t i;
        int r;

        if (!json_is_array(forget) || !json_is_object(units))
                return -EINVAL;
        json_array_foreach(forget, i, v)
                if (!json_is_string(v))
                        return -EINVAL;
        json_object_foreach(units, name, v) {
                r = state_unit_from_json(&check, name, v);
                if (r < 0)
                        return r;
        }

        json_array_foreach(forget, i, v) {
                bool found;
                size_t k = state_unit_index(s, json_string_value(v), &found);

                if (found)
                        state_remove_at(s, k);
        }
        json_object_foreach(units, name, v) {
                bool found;
                size_t k = state_unit_index(s, name, &found);

                if (found)
                        state_remove_at(s, k);
                r = state_unit_from_json(s, name, v);
                if (r < 0)
                        return r;       /* only -ENOMEM: checked above */
        }
        return 0;
}

int bw_state_journal_apply(struct bw_state *s, const char *buf, size_t len) {
        size_t at = 0;
        int r, applied = 0;

        while (at < len) {
                const char *nl = memchr(buf + at, '\n', len - at);
                json_error_t err;
                json_t *line;
                uint64_t g;

                if (!nl)
                        break;          /* cut short by a crash: never synced, its writes never made */
                line = json_loadb(buf + at, (size_t) (nl - (buf + at)), JSON_REJECT_DUPLICATES, &err);
                at = (size_t) (nl - buf) + 1;
                if (!line)
                        return -EINVAL;
                r = state_json_get_u64(json_object_get(line, "generation"), &g);
                if (r >= 0 && g == s->generation) {
                        r = journal_apply(s, line);
                        applied += r >= 0;
                }
                json_decref(line);
                if (r < 0)
                        return r;
        }
        return applied;
}

int bw_state_journal_replay(int dirfd, const char *name, struct bw_state *s) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        r = bw_read_regular_at(dirfd, name, O_NOFOLLOW, STATE_MAX_BYTES, &buf, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return bw_state_journal_apply(s, buf, len);
}
