# Spark Connect's protocol, compiled from the descriptors the PySpark client ships (no .proto
# file of Spark is copied into this repository): cmake/spark_connect_descriptors.py fetches the
# pinned pyspark-client sdist once with pip into ${SLUICE_CACHE}/connect-protos (at configure
# time, never at test time) and writes spark_connect.pb, a FileDescriptorSet; protoc and
# grpc_cpp_plugin (Debian's protobuf-compiler, protobuf-compiler-grpc) generate C++ from it at
# build time. Defines the static library sluice_connect_proto (generated code, no warnings as
# errors), which only the connect layer links.

find_package(Protobuf REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
find_program(SLUICE_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

if(DEFINED ENV{XDG_CACHE_HOME})
  set(_sluice_cache "$ENV{XDG_CACHE_HOME}/sluice")
else()
  set(_sluice_cache "$ENV{HOME}/.cache/sluice")
endif()
set(SLUICE_CONNECT_PROTO_CACHE "${_sluice_cache}/connect-protos" CACHE PATH
    "Where the Spark Connect descriptors are fetched (cmake/spark_connect_descriptors.py)")

execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/spark_connect_descriptors.py"
          "${SLUICE_CONNECT_PROTO_CACHE}"
  OUTPUT_VARIABLE SLUICE_CONNECT_DESCRIPTORS OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _sluice_descriptors_rc)
if(NOT _sluice_descriptors_rc EQUAL 0)
  message(FATAL_ERROR "Spark Connect descriptors: cmake/spark_connect_descriptors.py failed")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             "${PROJECT_SOURCE_DIR}/cmake/spark_connect_descriptors.py")

set(_sluice_connect_files types common expressions relations commands catalog ml_common ml
    pipelines base)
set(_gen "${PROJECT_BINARY_DIR}/generated/connect")
set(_protos "")
set(_outputs "")
foreach(name IN LISTS _sluice_connect_files)
  list(APPEND _protos "spark/connect/${name}.proto")
  list(APPEND _outputs "${_gen}/spark/connect/${name}.pb.cc" "${_gen}/spark/connect/${name}.pb.h")
endforeach()
list(APPEND _outputs "${_gen}/spark/connect/base.grpc.pb.cc" "${_gen}/spark/connect/base.grpc.pb.h")

# google/protobuf/*.proto (imported by Spark's files) come from Debian's libprotobuf-dev.
add_custom_command(
  OUTPUT ${_outputs}
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_gen}"
  COMMAND protobuf::protoc "--descriptor_set_in=${SLUICE_CONNECT_DESCRIPTORS}"
          "--proto_path=${Protobuf_INCLUDE_DIRS}" "--cpp_out=${_gen}" "--grpc_out=${_gen}"
          "--plugin=protoc-gen-grpc=${SLUICE_GRPC_CPP_PLUGIN}" ${_protos}
  DEPENDS "${SLUICE_CONNECT_DESCRIPTORS}"
  COMMENT "Generating Spark Connect's protocol code (protoc, grpc_cpp_plugin)"
  VERBATIM)

add_library(sluice_connect_proto STATIC ${_outputs})
# Generated code: its own flags, none of Sluice's -Werror; -O1 keeps the compile short.
target_compile_options(sluice_connect_proto PRIVATE -w -O1)
target_include_directories(sluice_connect_proto SYSTEM PUBLIC "${_gen}")
target_link_libraries(sluice_connect_proto PUBLIC protobuf::libprotobuf PkgConfig::GRPCPP)
