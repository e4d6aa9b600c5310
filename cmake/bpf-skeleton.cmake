# `bpftool gen skeleton OBJECT name NAME > OUTPUT`, without a shell: run with cmake -P
# -DBPFTOOL= -DOBJECT= -DNAME= -DOUTPUT=. A failed run leaves no half-written header behind.
execute_process(COMMAND ${BPFTOOL} gen skeleton ${OBJECT} name ${NAME}
  OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE rv)
if(NOT rv EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "bpftool gen skeleton ${OBJECT} failed: ${rv}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
