# `report MODEL --format json -o FILE` writes the ranking with the documented fields; the format
# follows -o's suffix when --format is absent; html and pdf work where the report library is built
# (HTML=1) and are refused with a sentence otherwise; a model file that does not exist exits with 2
# naming it.
set(json ${WORK}/report.json)
file(REMOVE ${json})
execute_process(COMMAND ${CLI} report zoo:resnet18 --format json -o ${json}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "report --format json exited with ${rc}: ${err}")
endif()
file(READ ${json} text)
string(JSON format GET "${text}" format)
string(JSON version GET "${text}" format_version)
string(JSON n LENGTH "${text}" ranking)
if(NOT format STREQUAL "trainscope-hardware-choice" OR NOT version EQUAL 1 OR n LESS 20)
  message(FATAL_ERROR "format ${format} ${version}, ${n} rows")
endif()
string(JSON first GET "${text}" ranking 0 recommended)
string(JSON batch GET "${text}" ranking 0 batch)
string(JSON cost GET "${text}" ranking 0 usd_to_train value)
string(JSON low GET "${text}" ranking 0 usd_to_train low)
if(NOT first OR batch LESS 1 OR NOT cost GREATER 0 OR low GREATER cost)
  message(FATAL_ERROR "first row: recommended ${first}, batch ${batch}, cost ${low} <= ${cost}")
endif()
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON rank GET "${text}" ranking ${i} rank)
  math(EXPR expected "${i} + 1")
  if(NOT rank EQUAL expected)
    message(FATAL_ERROR "row ${i} has rank ${rank}")
  endif()
endforeach()

# Fixed batch, two GPUs, CSV from the suffix.
execute_process(COMMAND ${CLI} report zoo:resnet18 --gpu t4,h100-sxm --batch 64 --precision fp32,amp-fp16
                        --epochs 2 -o ${WORK}/report.csv
                RESULT_VARIABLE rc ERROR_VARIABLE err)
file(STRINGS ${WORK}/report.csv lines)
list(LENGTH lines nlines)
list(GET lines 0 header)
if(NOT rc EQUAL 0 OR NOT nlines EQUAL 3 OR NOT header MATCHES "^rank,gpu,name,recommended,precision,batch,")
  message(FATAL_ERROR "report -o report.csv: exit ${rc} (${err}), ${nlines} lines, header ${header}")
endif()
list(GET lines 1 row)
if(NOT row MATCHES ",true,(fp32|amp-fp16),64,")
  message(FATAL_ERROR "row at the fixed batch: ${row}")
endif()

execute_process(COMMAND ${CLI} report ${WORK}/missing-model.onnx --format json -o ${WORK}/never.json
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "missing-model.onnx")
  message(FATAL_ERROR "a missing model: exit ${rc}, '${err}'")
endif()
execute_process(COMMAND ${CLI} report zoo:resnet18 -o ${WORK}/report.txt RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "report.txt: cannot tell the report's format")
  message(FATAL_ERROR "an unknown suffix: exit ${rc}, '${err}'")
endif()

execute_process(COMMAND ${CLI} report zoo:resnet18 --gpu a100-sxm4-80gb,l4 -o ${WORK}/report.html
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(HTML)
  file(READ ${WORK}/report.html html LIMIT 200)
  if(NOT rc EQUAL 0 OR NOT html MATCHES "^<!DOCTYPE html>")
    message(FATAL_ERROR "html: exit ${rc}, '${err}'")
  endif()
  execute_process(COMMAND ${CLI} report zoo:resnet18 --gpu l4 --format pdf -o ${WORK}/report.pdf
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  file(READ ${WORK}/report.pdf pdf LIMIT 5 HEX)
  if(NOT rc EQUAL 0 OR NOT pdf STREQUAL "255044462d")  # %PDF-
    message(FATAL_ERROR "pdf: exit ${rc}, '${err}'")
  endif()
elseif(NOT rc EQUAL 2 OR NOT err MATCHES "report.html: html reports need the GUI build")
  message(FATAL_ERROR "html without the GUI build: exit ${rc}, '${err}'")
endif()
# A language model: AdamW, a goal of 20 tokens per parameter (BERT-base has 109,482,240 as Hugging
# Face counts them: 2,189,644,800 tokens), its sequence length and tokens/s in every row.
execute_process(COMMAND ${CLI} report zoo:bert_base?seq=128 --gpu a100-sxm4-80gb --format json -o ${WORK}/bert.json
                RESULT_VARIABLE rc ERROR_VARIABLE err)
file(READ ${WORK}/bert.json bert)
string(JSON tokens GET "${bert}" goal tokens)
string(JSON seq GET "${bert}" goal seq)
string(JSON optimizer GET "${bert}" scenario optimizer)
string(JSON rate GET "${bert}" ranking 0 tokens_per_s value)
if(NOT rc EQUAL 0 OR NOT tokens MATCHES "^2189644800(\\.0)?$" OR NOT seq EQUAL 128 OR NOT optimizer STREQUAL "adamw"
   OR NOT rate GREATER 0)
  message(FATAL_ERROR "bert_base: exit ${rc} (${err}), goal ${tokens} tokens at ${seq}, ${optimizer}, ${rate} tokens/s")
endif()
message(STATUS "report: ${n} GPUs ranked; first at batch ${batch}, \$${cost}")
