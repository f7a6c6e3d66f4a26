/* Workspace path resolution and whole-file I/O; see workspace.h. */
#include "source/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

nsys_err nsys_ws_resolve(const char *root, const char *file, char **abs_out, char **rel_out,
                         char **root_out, char *err, size_t errcap) {
  *abs_out = *rel_out = *root_out = NULL;
  char *rroot = realpath(root, NULL);
  if (!rroot) {
    snprintf(err, errcap, "workspaceRoot %s: %s", root, strerror(errno));
    return NSYS_E_IO;
  }
  struct stat st;
  if (stat(rroot, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(err, errcap, "workspaceRoot %s: not a directory", root);
    free(rroot);
    return NSYS_E_IO;
  }
  char *joined = file[0] == '/' ? nsys_xstrdup(file) : nsys_xasprintf("%s/%s", rroot, file);
  char *rfile = realpath(joined, NULL);
  if (!rfile) {
    /* a missing file outside the root is still "outside" */
    int e = errno;
    char *dir = nsys_xstrdup(joined), *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    char *rdir = slash && *dir ? realpath(dir, NULL) : NULL;
    size_t rl = strlen(rroot);
    bool outside = rdir && !(strncmp(rdir, rroot, rl) == 0 && (rdir[rl] == '/' || rdir[rl] == '\0'));
    if (outside) snprintf(err, errcap, "%s is outside the workspace root %s", file, rroot);
    else snprintf(err, errcap, "%s: %s", file, strerror(e));
    free(rdir);
    free(dir);
    free(joined);
    free(rroot);
    return outside ? NSYS_E_OUTSIDE_WORKSPACE : NSYS_E_IO;
  }
  free(joined);
  size_t rl = strlen(rroot);
  bool inside = strcmp(rroot, "/") == 0 ? rfile[0] == '/'
                                        : strncmp(rfile, rroot, rl) == 0 && rfile[rl] == '/';
  if (!inside) {
    snprintf(err, errcap, "%s is outside the workspace root %s", file, rroot);
    free(rfile);
    free(rroot);
    return NSYS_E_OUTSIDE_WORKSPACE;
  }
  if (stat(rfile, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(err, errcap, "%s: not a regular file", file);
    free(rfile);
    free(rroot);
    return NSYS_E_IO;
  }
  *rel_out = nsys_xstrdup(rfile + (strcmp(rroot, "/") == 0 ? 1 : rl + 1));
  *abs_out = rfile;
  *root_out = rroot;
  return NSYS_OK;
}

char *nsys_ws_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errcap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errcap, "%s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max_bytes) {
    snprintf(err, errcap, "%s: not a regular file of at most %zu bytes", path, max_bytes);
    close(fd);
    return NULL;
  }
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = nsys_xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max_bytes + 1) break;
      cap *= 2;
      buf = nsys_xrealloc(buf, cap);
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      snprintf(err, errcap, "%s: %s", path, strerror(errno));
      free(buf);
      close(fd);
      return NULL;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *len = n;
  return buf;
}

int nsys_ws_write_file(const char *path, const char *data, size_t len, char *err, size_t errcap) {
  struct stat st;
  mode_t mode = 0644;
  if (stat(path, &st) == 0) mode = st.st_mode & 07777;
  char *tmp = nsys_xasprintf("%s.nsys-ai-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    snprintf(err, errcap, "%s: %s", path, strerror(errno));
    free(tmp);
    return -1;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      snprintf(err, errcap, "%s: %s", path, strerror(errno));
      close(fd);
      unlink(tmp);
      free(tmp);
      return -1;
    }
    off += (size_t)w;
  }
  if (fchmod(fd, mode) != 0 || fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
    snprintf(err, errcap, "%s: %s", path, strerror(errno));
    unlink(tmp);
    free(tmp);
    return -1;
  }
  free(tmp);
  return 0;
}

const char *nsys_ws_relative(const char *root, const char *path) {
  size_t rl = root ? strlen(root) : 0;
  if (rl && strncmp(path, root, rl) == 0 && path[rl] == '/') return path + rl + 1;
  if (path[0] == '.' && path[1] == '/') return path + 2;
  return path;
}
