# proc_mountinfo_host_paths from a bind-mounted root, on host and on the
# minimal image (tests/imagerun/mountinfo_bind_root.sh); skipped when the
# image is not built in build/images.
add_test(NAME ImageMounts.mountinfo_bind_root
         COMMAND ${CMAKE_SOURCE_DIR}/tests/imagerun/mountinfo_bind_root.sh $<TARGET_FILE:airlock>
                 ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/images)
set_tests_properties(ImageMounts.mountinfo_bind_root PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
