# Type-checks TypeScript that uses a generated .d.ts with the official client's types:
#   USE:    must compile (tsc --strict)
#   MISUSE: must fail, with errors on exactly the lines marked `// error`
#
#   cmake -DNODE=<node> -DJS_DIR=<tests/js> -DDTS=<file.d.ts> -DUSE=<a.ts> -DMISUSE=<b.ts>
#         -DWORK=<dir> -P check_types.cmake
foreach(_var NODE JS_DIR DTS USE MISUSE WORK)
  if("${${_var}}" STREQUAL "")
    message(FATAL_ERROR "check_types.cmake: -D${_var}=... is required")
  endif()
endforeach()
set(_tsc ${JS_DIR}/node_modules/typescript/bin/tsc)
if(NOT EXISTS ${_tsc})
  message(FATAL_ERROR "TypeScript is missing: ${_tsc} (make test installs tests/js/package-lock.json)")
endif()
if(NOT EXISTS ${DTS})
  message(FATAL_ERROR "${DTS} was not generated (rivetkit_emit_types runs after the build)")
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
get_filename_component(_dts_name ${DTS} NAME)
file(COPY ${DTS} ${USE} ${MISUSE} DESTINATION ${WORK})
# The official client's types resolve from tests/js's node_modules, as in an application.
file(CREATE_LINK ${JS_DIR}/node_modules ${WORK}/node_modules SYMBOLIC)

function(tsc name file)
  file(WRITE ${WORK}/tsconfig.${name}.json "{
  \"compilerOptions\": {
    \"strict\": true, \"noEmit\": true, \"target\": \"ES2022\", \"module\": \"ESNext\",
    \"moduleResolution\": \"Bundler\", \"lib\": [\"ES2022\", \"DOM\"], \"skipLibCheck\": true,
    \"types\": []
  },
  \"files\": [\"${file}\"]
}
")
  execute_process(COMMAND ${NODE} ${_tsc} -p tsconfig.${name}.json --pretty false
                  WORKING_DIRECTORY ${WORK}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  set(TSC_RC ${_rc} PARENT_SCOPE)
  set(TSC_OUT "${_out}" PARENT_SCOPE)
endfunction()

get_filename_component(_use ${USE} NAME)
tsc(use ${_use})
if(NOT TSC_RC EQUAL 0)
  file(READ ${DTS} _dts_text)
  message(FATAL_ERROR "${_use} does not compile against ${_dts_name}:\n${TSC_OUT}\n"
                      "--- ${_dts_name}:\n${_dts_text}")
endif()

get_filename_component(_misuse ${MISUSE} NAME)
tsc(misuse ${_misuse})
if(TSC_RC EQUAL 0)
  message(FATAL_ERROR "${_misuse} compiled against ${_dts_name}: its misuses were not caught")
endif()
# Lines tsc reports in the misuse file, and lines marked `// error` in it.
string(REGEX MATCHALL "${_misuse}\\(([0-9]+),[0-9]+\\): error" _reported "${TSC_OUT}")
set(_reported_lines "")
foreach(_hit ${_reported})
  string(REGEX REPLACE ".*\\(([0-9]+),.*" "\\1" _line "${_hit}")
  list(APPEND _reported_lines ${_line})
endforeach()
list(REMOVE_DUPLICATES _reported_lines)
file(STRINGS ${MISUSE} _lines)
set(_marked_lines "")
set(_n 0)
foreach(_text IN LISTS _lines)
  math(EXPR _n "${_n} + 1")
  if(_text MATCHES "^[ \t]*[^ \t/].*// error")
    list(APPEND _marked_lines ${_n})
  endif()
endforeach()
list(SORT _reported_lines COMPARE NATURAL)
if(NOT _reported_lines STREQUAL _marked_lines)
  message(FATAL_ERROR "${_misuse}: tsc reported errors on lines [${_reported_lines}], expected "
                      "exactly the marked lines [${_marked_lines}]:\n${TSC_OUT}")
endif()
list(LENGTH _marked_lines _count)
message(STATUS "${_use} compiles; ${_misuse}: all ${_count} misuses rejected")
