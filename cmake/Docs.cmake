# The documentation site (docs/, mkdocs.yml): scripts/docs-site.sh copies it
# into the build tree, generates the scenario key reference from this build's
# podnet (reference/scenario-keys.md, never committed) and runs
# `mkdocs build --strict`, so a broken link or a page missing from the nav
# fails. MkDocs and its Material theme are Debian packages (scripts/setup.sh).
add_custom_target(docs
  COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/docs-site.sh ${CMAKE_BINARY_DIR}
  DEPENDS podnet
  COMMENT "podnet documentation site: ${CMAKE_BINARY_DIR}/docs-site/site/index.html"
  VERBATIM)
if(PODNET_TESTS)
  add_test(NAME docs_site COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/docs-site.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(docs_site PROPERTIES LABELS docs TIMEOUT 300)
endif()
