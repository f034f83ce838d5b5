# Turns a text file into a C string constant (pm_api_openapi_yaml).
file(READ ${IN} content HEX)
string(LENGTH "${content}" hexlen)
math(EXPR len "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE ${OUT} "#include <stddef.h>\nconst unsigned char pm_api_openapi_yaml[] = {${bytes} 0x00};\nconst size_t pm_api_openapi_yaml_len = ${len};\n")
