# rivetkit_emit_types(<target> <file.d.ts>)
#   After every build of <target>, a program whose main() calls rivetkit::Registry::run, runs it
#   with `--emit-types <file.d.ts>`: the TypeScript types of its actors for the official client
#   (`createClient<Registry>()`, README "Typed TypeScript clients"). Installed with the CMake
#   package, so find_package(rivetkit) users have it too.
function(rivetkit_emit_types target output)
  if(NOT IS_ABSOLUTE "${output}")
    set(output "${CMAKE_CURRENT_BINARY_DIR}/${output}")
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
                     COMMAND $<TARGET_FILE:${target}> --emit-types ${output}
                     BYPRODUCTS ${output}
                     COMMENT "TypeScript types of ${target}: ${output}"
                     VERBATIM)
endfunction()
