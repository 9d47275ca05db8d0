# cmake -DBIN2C=... -DIN=x.fatbin -DOUT=x.h -DNAME=symbol -P embed_fatbin.cmake: the fatbin as a
# C array (bin2c writes to stdout).
execute_process(COMMAND ${BIN2C} --const --length --name ${NAME} ${IN} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bin2c failed on ${IN}")
endif()
