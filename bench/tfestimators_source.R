# What both tfestimators probes (probe_tfestimators_tests.R, probe_tfestimators_docs.R) read
# tfestimators' repository with: a checkout or a bare git directory, nothing of it stored here.

# `files()` lists the repository's files, `read(file)` gives one file's lines.
source_reader <- function(path) {
  path <- normalizePath(path, mustWork = TRUE)
  bare <- file.exists(file.path(path, "HEAD")) && dir.exists(file.path(path, "objects")) &&
    !dir.exists(file.path(path, ".git"))
  if (bare) {
    list(
      files = function() system2("git", c("--git-dir", shQuote(path), "ls-tree", "-r",
                                          "--name-only", "HEAD"), stdout = TRUE),
      read = function(file) system2("git", c("--git-dir", shQuote(path), "show",
                                             shQuote(paste0("HEAD:", file))), stdout = TRUE))
  } else {
    list(
      files = function() list.files(path, recursive = TRUE),
      read = function(file) readLines(file.path(path, file), warn = FALSE))
  }
}
