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

# The README and the recipes (docs/recipes/*.md): every `$ podnet ...` command of their console blocks runs in a scratch
# directory and must print the lines the page shows, in order (tests/recipes/check_recipes.py).
if(PODNET_TESTS)
  find_program(PODNET_RECIPES_PYTHON3 NAMES python3)
  add_test(NAME docs_recipes
           COMMAND ${PODNET_RECIPES_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/recipes/check_recipes.py $<TARGET_FILE:podnet>
                   ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/recipes)
  set_tests_properties(docs_recipes PROPERTIES LABELS docs TIMEOUT 900 ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()

# The examples of every command's --help (its "Examples:" footer) run as a newcomer copies them: each must exit 0,
# but those that need the user's own files or run for minutes, which the script lists with the reason
# (tests/help/check_examples.py).
if(PODNET_TESTS)
  add_test(NAME docs_help_examples
           COMMAND ${PODNET_RECIPES_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/help/check_examples.py $<TARGET_FILE:podnet>
                   ${CMAKE_BINARY_DIR}/help-examples)
  set_tests_properties(docs_help_examples PROPERTIES LABELS docs TIMEOUT 900 ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
