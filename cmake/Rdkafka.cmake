# librdkafka for every Sluice target that talks to Kafka: the imported target RdKafka::rdkafka.
#
# Sluice links a pinned librdkafka (>= 2.6.1: Kafka 4 brokers refuse the SCRAM login of older
# ones; docs/kafka.md), built once by scripts/librdkafka.sh as a static library into the cache
# outside the clone (${XDG_CACHE_HOME:-~/.cache}/sluice/librdkafka-<version>/). Configuring runs
# the script, which builds it when it is missing and otherwise only prints where it is.
# -DSLUICE_RDKAFKA_ROOT=<dir with include/librdkafka/rdkafka.h and lib/librdkafka.a> uses
# another build of the same layout instead.
set(SLUICE_RDKAFKA_ROOT "" CACHE PATH
    "librdkafka install (include/librdkafka/, lib/librdkafka.a, lib/librdkafka.libs); empty: scripts/librdkafka.sh")

set(_rdkafka_root "${SLUICE_RDKAFKA_ROOT}")
if(NOT _rdkafka_root)
  execute_process(
    COMMAND "${PROJECT_SOURCE_DIR}/scripts/librdkafka.sh"
    OUTPUT_VARIABLE _rdkafka_root
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rdkafka_rc)
  if(NOT _rdkafka_rc EQUAL 0)
    message(FATAL_ERROR "scripts/librdkafka.sh failed (exit ${_rdkafka_rc}): librdkafka is not built")
  endif()
endif()
foreach(_f include/librdkafka/rdkafka.h include/librdkafka/rdkafka_mock.h lib/librdkafka.a
           lib/librdkafka.libs)
  if(NOT EXISTS "${_rdkafka_root}/${_f}")
    message(FATAL_ERROR "librdkafka: ${_rdkafka_root}/${_f} is missing (scripts/librdkafka.sh builds it)")
  endif()
endforeach()

# The system libraries the static archive needs, as librdkafka's configure found them
# (-lssl -lcrypto -lzstd -llz4 -lz ...).
file(READ "${_rdkafka_root}/lib/librdkafka.libs" _rdkafka_libs)
string(STRIP "${_rdkafka_libs}" _rdkafka_libs)
separate_arguments(_rdkafka_libs UNIX_COMMAND "${_rdkafka_libs}")
list(REMOVE_DUPLICATES _rdkafka_libs)

add_library(RdKafka::rdkafka STATIC IMPORTED GLOBAL)
set_target_properties(RdKafka::rdkafka PROPERTIES
  IMPORTED_LOCATION "${_rdkafka_root}/lib/librdkafka.a"
  INTERFACE_INCLUDE_DIRECTORIES "${_rdkafka_root}/include"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_rdkafka_root}/include"
  INTERFACE_LINK_LIBRARIES "${_rdkafka_libs}")
message(STATUS "librdkafka: ${_rdkafka_root}")
