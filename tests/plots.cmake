# plots/ tests: pytest on the fixture run (tests/fixtures/run_small) and a headless-Chromium
# screenshot of its report. They need a Python with numpy, pandas, matplotlib and pytest:
# ROOFLAB_PYTHON, by default the project's .venv (made from plots/requirements.txt), else the
# interpreter CMake finds. Without the packages (or without Chromium) they report "skipped".
set(_rooflab_py_default "")
if(EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(_rooflab_py_default "${PROJECT_SOURCE_DIR}/.venv/bin/python")
else()
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(_rooflab_py_default "${Python3_EXECUTABLE}")
  endif()
endif()
set(ROOFLAB_PYTHON "${_rooflab_py_default}" CACHE FILEPATH
    "Python interpreter for plots/ and its tests (needs plots/requirements.txt)")

if(NOT ROOFLAB_PYTHON)
  message(STATUS "plots tests: no Python interpreter found; set -DROOFLAB_PYTHON=... to enable them")
  return()
endif()
message(STATUS "plots tests: using ${ROOFLAB_PYTHON}")

set(_plots_env MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1)
foreach(_suite rooflab_data figures report family_figures pot_figure gemm_knobs gemm_figures gemm_baselines compare claims gpu_figures mpi_figures rtamm_figures failed_rows run_all
                bad_json layout pot_script ab_script registry disturbed_rows peers history_check report_trends fleet cpu_identity)
  add_test(NAME plots.${_suite}
           COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py
                   ${CMAKE_CURRENT_SOURCE_DIR}/plots/test_${_suite}.py -q -p no:cacheprovider
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(plots.${_suite} PROPERTIES LABELS integration SKIP_RETURN_CODE 77
                       TIMEOUT 300 ENVIRONMENT "${_plots_env}")
endforeach()
rooflab_test_cost(70 plots.report)
# failed_rows also runs `rooflab model` (C++) on the fixture's failed bench entries.
if(TARGET rooflab)
  set_property(TEST plots.failed_rows APPEND PROPERTY ENVIRONMENT "ROOFLAB_BIN=$<TARGET_FILE:rooflab>")
  # registry: a run without list.json takes the variant facts from this build's `list --json`.
  set_property(TEST plots.registry APPEND PROPERTY ENVIRONMENT "ROOFLAB_BIN=$<TARGET_FILE:rooflab>")
endif()
# history_check: E-Divisive from signal-processing-algorithms (plots/requirements.txt).
set_property(TEST plots.history_check APPEND PROPERTY ENVIRONMENT
             "ROOFLAB_PYTEST_NEEDS=signal_processing_algorithms")

# history: the store on SQLite; history_postgres: the same round trip on a PostgreSQL server the
# test starts, SKIP (with the reason) without Debian's postgresql or python3-psycopg2.
add_test(NAME plots.history_store
         COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/plots/test_history_store.py -q -p no:cacheprovider -k "not postgres"
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME plots.history_postgres
         COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py --skip-if-none-ran
                 ${CMAKE_CURRENT_SOURCE_DIR}/plots/test_history_store.py -q -p no:cacheprovider -k postgres
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(plots.history_store plots.history_postgres PROPERTIES LABELS integration SKIP_RETURN_CODE 77
                     TIMEOUT 300 ENVIRONMENT "${_plots_env}")

# The fleet report (`rooflab report --fleet`) in headless Chromium, on tests/plots/fleet_fixture.py.
add_test(NAME plots.render_fleet
         COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/render_fleet_check.py
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(plots.render_fleet PROPERTIES LABELS integration SKIP_RETURN_CODE 77
                     TIMEOUT 300 ENVIRONMENT "${_plots_env}")
add_test(NAME plots.render_report
         COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/render_check.py
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(plots.render_report PROPERTIES LABELS integration SKIP_RETURN_CODE 77
                     TIMEOUT 300 ENVIRONMENT "${_plots_env}")
