# cpack -G DEB: one package "zipper" with zipperd, zipperctl, zipper-run,
# libmmpi (shared, static, headers, pkg-config and CMake files), the unit,
# the sysusers entry, the example settings and the man pages. Dependencies
# come from dpkg-shlibdeps. Build: cd build && cpack -G DEB.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zipper)
set(CPACK_PACKAGE_VENDOR "zipper")
set(CPACK_PACKAGE_CONTACT "zipper maintainers <zipper@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MPI across two InfiniBand clusters through a software forwarder")
set(CPACK_PACKAGE_DESCRIPTION "zipperd relays MPI traffic between two cluster subnets on bridge nodes; libmmpi is the M-prefixed MPI client library; zipperctl inspects a running zipperd; zipper-run launches jobs across both clusters.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# RelWithDebInfo binaries carry their debug info; the package does not.
set(CPACK_STRIP_FILES ON)
# zipper-run, zipper-emulate and zipper-netns-rsh are Python 3 (standard
# library); they need mpirun, ip and tc (iproute2), taskset and unshare. zipperd
# serves /metrics with libmicrohttpd (shlibdeps finds it too; named for clarity).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, openmpi-bin, iproute2, util-linux, libmicrohttpd12")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_CURRENT_LIST_DIR}/../deploy/service/postinst
  ${CMAKE_CURRENT_LIST_DIR}/../deploy/service/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
