//===- FileOutput.cpp - All-or-nothing output files -----------------------===//
#include "flamia/Support/FileOutput.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flamia {

namespace {

std::string reason(int err) { return std::strerror(err); }

/// Creates an empty temporary file next to `path` with the permissions a
/// new file would get (0666 & ~umask); returns its descriptor, or -1.
int createTemporary(const std::string &path, std::string &tmp,
                    std::string &error) {
  std::vector<char> name(path.begin(), path.end());
  const char suffix[] = ".tmp-XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof suffix); // with the NUL
  int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = path + ": cannot create file: " + reason(errno);
    return -1;
  }
  tmp = name.data();
  mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  return fd;
}

/// fsync + close, both checked; closes `fd` in any case.
bool syncAndClose(int fd, const std::string &path, std::string &error) {
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    error = path + ": cannot write: " + reason(errno);
    ::close(fd);
    return false;
  }
  if (::close(fd) != 0) {
    error = path + ": cannot write: " + reason(errno);
    return false;
  }
  return true;
}

bool writeAllBytes(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size > (1u << 30) ? (1u << 30) : size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

/// writeNpy into `tmp`, then checks that the file holds the whole array
/// (writeNpy's stream may lose an error in its final flush) and syncs it.
bool writeNpyChecked(const std::string &path, const std::string &tmp,
                     const NpyArray &array, std::string &error) {
  if (!writeNpy(tmp, array, error)) {
    replaceAll(error, tmp, path);
    if (error.find(path) == std::string::npos)
      error = path + ": " + error;
    return false;
  }
  int fd = ::open(tmp.c_str(), O_RDWR);
  if (fd < 0) {
    error = path + ": cannot write: " + reason(errno);
    return false;
  }
  struct stat st;
  unsigned char head[10];
  if (::fstat(fd, &st) != 0 || ::pread(fd, head, sizeof head, 0) != 10) {
    error = path + ": cannot write: the file is incomplete";
    ::close(fd);
    return false;
  }
  // Version 1.0 (what writeNpy writes): a 2-byte header length; 2.0 and 3.0:
  // 4 bytes.
  uint64_t headerBytes =
      head[6] == 1 ? 10u + (head[8] | (uint64_t{head[9]} << 8)) : 0;
  if (headerBytes == 0 ||
      static_cast<uint64_t>(st.st_size) != headerBytes + array.bytes.size()) {
    error = path + ": cannot write: the file is incomplete (" +
            std::to_string(st.st_size) + " bytes written)";
    ::close(fd);
    return false;
  }
  return syncAndClose(fd, path, error);
}

} // namespace

bool writeFileAtomically(const std::string &path, const void *data,
                         size_t size, std::string &error) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = path + ": cannot replace a directory";
    return false;
  }
  std::string tmp;
  int fd = createTemporary(path, tmp, error);
  if (fd < 0)
    return false;
  if (!writeAllBytes(fd, data, size)) {
    error = path + ": cannot write: " + reason(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return false;
  }
  if (!syncAndClose(fd, path, error)) {
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot rename the temporary file into place: " +
            reason(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool writeNpyFilesAtomically(
    const std::vector<std::pair<std::string, NpyArray>> &files,
    std::string &error) {
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&](size_t from) {
    for (size_t i = from; i < temporaries.size(); ++i)
      ::unlink(temporaries[i].c_str());
  };
  for (const auto &[path, array] : files) {
    std::string tmp;
    int fd = createTemporary(path, tmp, error);
    if (fd < 0) {
      removeTemporaries(0);
      return false;
    }
    ::close(fd);
    temporaries.push_back(tmp);
    if (!writeNpyChecked(path, tmp, array, error)) {
      removeTemporaries(0);
      return false;
    }
  }
  // What would make a rename fail (a directory in the way) is checked for
  // every file before the first rename, so that no destination changes.
  for (const auto &file : files) {
    struct stat st;
    if (::stat(file.first.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      error = file.first + ": cannot replace a directory";
      removeTemporaries(0);
      return false;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temporaries[i].c_str(), files[i].first.c_str()) != 0) {
      error = files[i].first +
              ": cannot rename the temporary file into place: " +
              reason(errno) +
              (i ? " (" + std::to_string(i) + " of " +
                       std::to_string(files.size()) +
                       " files were already in place)"
                 : std::string());
      removeTemporaries(i);
      return false;
    }
  }
  return true;
}

} // namespace flamia
