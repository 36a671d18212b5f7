# The cluster MPI that libmmpi is built on (docs/mpi.md): -DZIPPER_MPI=openmpi
# (default) or mpich. Each build names what it installs after its MPI, so the
# two install side by side:
#   openmpi: libmmpi, libmmpi_transparent, mmpicc, find_package(mmpi), mmpi.pc
#   mpich:   libmmpi-mpich, libmmpi_transparent-mpich, mmpicc-mpich,
#            find_package(mmpi-mpich), mmpi-mpich.pc
# The MPI's compiler wrapper is found by name (Debian installs both MPIs with
# mpicc pointing at one of them through alternatives) and checked with
# `mpicc -show`; FindMPI then reads its flags. Sets ZIPPER_MPI_SUFFIX ("" or
# "-mpich"), ZIPPER_MPI_PC (the MPI's pkg-config name), ZIPPER_MPICC (the
# wrapper mmpicc runs) and ZIPPER_MPI_DIR (capi/mpi/<MPI>: the code that
# differs per MPI).
set(ZIPPER_MPI openmpi CACHE STRING "The cluster MPI libmmpi is built on: openmpi or mpich")
set_property(CACHE ZIPPER_MPI PROPERTY STRINGS openmpi mpich)

if(ZIPPER_MPI STREQUAL "openmpi")
  set(ZIPPER_MPI_SUFFIX "")
  set(ZIPPER_MPI_PC ompi-c)
  set(wrapper_names mpicc.openmpi mpicc)
  set(show_pattern "openmpi|-lmpi( |$)")
elseif(ZIPPER_MPI STREQUAL "mpich")
  set(ZIPPER_MPI_SUFFIX -mpich)
  set(ZIPPER_MPI_PC mpich)
  set(wrapper_names mpicc.mpich mpicc-mpich mpicc)
  set(show_pattern "-lmpich|mpich")
else()
  message(FATAL_ERROR "ZIPPER_MPI must be openmpi or mpich, got '${ZIPPER_MPI}'")
endif()
set(ZIPPER_MPI_DIR ${CMAKE_SOURCE_DIR}/capi/mpi/${ZIPPER_MPI})

if(NOT MPI_C_COMPILER)
  find_program(ZIPPER_MPICC_FOUND NAMES ${wrapper_names}
    DOC "The ${ZIPPER_MPI} C compiler wrapper")
  if(NOT ZIPPER_MPICC_FOUND)
    message(FATAL_ERROR "ZIPPER_MPI=${ZIPPER_MPI}: none of ${wrapper_names} found "
      "(deploy/install-deps.sh installs both MPIs)")
  endif()
  execute_process(COMMAND ${ZIPPER_MPICC_FOUND} -show OUTPUT_VARIABLE show ERROR_QUIET)
  if(NOT show MATCHES "${show_pattern}")
    message(FATAL_ERROR "ZIPPER_MPI=${ZIPPER_MPI}: ${ZIPPER_MPICC_FOUND} -show does not "
      "name ${ZIPPER_MPI} ('${show}'): pass -DMPI_C_COMPILER=<its mpicc>")
  endif()
  set(MPI_C_COMPILER ${ZIPPER_MPICC_FOUND} CACHE FILEPATH "The MPI C compiler wrapper")
endif()
set(ZIPPER_MPICC ${MPI_C_COMPILER})
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "cluster MPI: ${ZIPPER_MPI} (${MPI_C_COMPILER}, MPI ${MPI_C_VERSION})")
