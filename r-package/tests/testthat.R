library(testthat)
library(pyhooks)

# This package is not on CRAN: run the snapshot tests too.
if (!nzchar(Sys.getenv("NOT_CRAN"))) Sys.setenv(NOT_CRAN = "true")

test_check("pyhooks")
