# Build speed: a compiler cache and a faster linker, each used when installed
# (scripts/install-deps.sh installs both) and never required.
#
# ccache keys an object on the compiler's command line and, with debug info,
# on the working directory: both name the clone's absolute path, so a second
# clone (a CI run in a fresh checkout) would miss on every object. The launcher
# sets CCACHE_BASEDIR to the source tree, which makes ccache rewrite the paths
# under it to relative ones, and the prefix maps below make the paths written
# into debug info and __FILE__ relative too (ccache applies the debug map to
# the working directory before hashing it). The cache itself stays where ccache
# keeps it by default (~/.cache/ccache), outside every clone.
option(CRESCENT_CCACHE "Compile through ccache when it is installed" ON)
find_program(CRESCENT_CCACHE_PROGRAM ccache)
if(CRESCENT_CCACHE AND CRESCENT_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(launcher ${CMAKE_BINARY_DIR}/ccache-launcher)
  file(WRITE ${launcher}
       "#!/bin/sh\n"
       ": \"\${CCACHE_BASEDIR:=${PROJECT_SOURCE_DIR}}\"\n"
       "export CCACHE_BASEDIR\n"
       "exec '${CRESCENT_CCACHE_PROGRAM}' \"$@\"\n")
  file(CHMOD ${launcher} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
       GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
endif()
add_compile_options(-fdebug-prefix-map=${PROJECT_SOURCE_DIR}=.
                    -fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=)

# mold links the test binaries (each pulls in gRPC, protobuf and abseil) in a
# fraction of GNU ld's time; the figures are in docs/building.md.
option(CRESCENT_MOLD "Link with mold when it is installed" ON)
find_program(CRESCENT_MOLD_PROGRAM mold)
if(CRESCENT_MOLD AND CRESCENT_MOLD_PROGRAM)
  add_link_options(-fuse-ld=mold)
endif()
