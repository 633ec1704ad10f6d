# `report TRACE -o FILE` for a shared A100 trace: the JSON names the recorded GPU and ranks every
# database GPU once (rank 1..n); the CSV from the suffix has a header and one record per GPU; html
# and pdf are written where the report library is built (HTML=1), with the ranking and the recorded
# GPU in the HTML, and refused with a sentence otherwise. The figures themselves are checked in
# tests/unit/test_trace_choice.cpp.
execute_process(COMMAND ${CLI} gpus --json OUTPUT_VARIABLE gpus_json RESULT_VARIABLE rc)
string(JSON ngpus LENGTH "${gpus_json}" gpus)
set(json ${WORK}/trace_report.json)
file(REMOVE ${json})
execute_process(COMMAND ${CLI} report ${TRACE} -o ${json} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "ranked for the job recorded on a100-sxm4-40gb; cheapest: ")
  message(FATAL_ERROR "report TRACE -o trace_report.json exited with ${rc}: ${out}${err}")
endif()
file(READ ${json} text)
string(JSON format GET "${text}" format)
string(JSON recorded GET "${text}" trace recorded_on)
string(JSON n LENGTH "${text}" ranking)
if(NOT format STREQUAL "trainscope-trace-choice" OR NOT recorded STREQUAL "a100-sxm4-40gb" OR NOT n EQUAL ngpus)
  message(FATAL_ERROR "format ${format}, recorded on ${recorded}, ${n} rows for ${ngpus} GPUs")
endif()
math(EXPR last "${n} - 1")
set(recorded_rows 0)
foreach(i RANGE ${last})
  string(JSON rank GET "${text}" ranking ${i} rank)
  string(JSON is_recorded GET "${text}" ranking ${i} recorded)
  math(EXPR expected "${i} + 1")
  if(NOT rank EQUAL expected)
    message(FATAL_ERROR "row ${i} has rank ${rank}")
  endif()
  if(is_recorded)
    math(EXPR recorded_rows "${recorded_rows} + 1")
  endif()
endforeach()
if(NOT recorded_rows EQUAL 1)
  message(FATAL_ERROR "${recorded_rows} rows marked recorded")
endif()

# A subset, CSV from the suffix.
execute_process(COMMAND ${CLI} report ${TRACE} --gpu h100-sxm,t4,a100-sxm4-40gb --precision tf32 -o ${WORK}/trace_report.csv
                RESULT_VARIABLE rc ERROR_VARIABLE err)
file(STRINGS ${WORK}/trace_report.csv lines)
list(LENGTH lines nlines)
list(GET lines 0 header)
if(NOT rc EQUAL 0 OR NOT nlines EQUAL 4 OR NOT header MATCHES "^rank,gpu,name,recorded,predicted,step_ms,")
  message(FATAL_ERROR "report TRACE -o trace_report.csv: exit ${rc} (${err}), ${nlines} lines, header ${header}")
endif()

execute_process(COMMAND ${CLI} report ${TRACE} --gpu a100-sxm4-40gb,h100-sxm,l4 -o ${WORK}/trace_report.html
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(HTML)
  file(READ ${WORK}/trace_report.html html)
  if(NOT rc EQUAL 0 OR NOT html MATCHES "^<!DOCTYPE html>" OR NOT html MATCHES "<table id=\"ranking\""
     OR NOT html MATCHES "data-gpu=\"a100-sxm4-40gb\"" OR NOT html MATCHES "data-gpu=\"h100-sxm\""
     OR NOT html MATCHES "data-gpu=\"l4\"" OR NOT html MATCHES "\\(recorded\\)")
    message(FATAL_ERROR "html: exit ${rc}, '${err}'")
  endif()
  execute_process(COMMAND ${CLI} report ${TRACE} --gpu l4 --format pdf -o ${WORK}/trace_report.pdf
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  file(READ ${WORK}/trace_report.pdf pdf LIMIT 5 HEX)
  if(NOT rc EQUAL 0 OR NOT pdf STREQUAL "255044462d")  # %PDF-
    message(FATAL_ERROR "pdf: exit ${rc}, '${err}'")
  endif()
elseif(NOT rc EQUAL 2 OR NOT err MATCHES "trace_report.html: html reports need the GUI build")
  message(FATAL_ERROR "html without the GUI build: exit ${rc}, '${err}'")
endif()
message(STATUS "trace report: ${n} GPUs ranked")
