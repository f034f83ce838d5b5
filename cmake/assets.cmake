# Writes a C file that embeds static files in the binary (the playground
# page and the three.js modules it loads), with .incbin so a megabyte of
# JavaScript costs the build nothing. Called with -DOUT=… -DLIST=… where
# LIST is "url|kind|file,…" (kind: html, js or css). A file that is absent is left out of
# the table (the page then says what is missing).
set(body "#include <stddef.h>\n#include \"assets.h\"\n")
set(table "")
set(i 0)
string(REPLACE "," ";" LIST "${LIST}")
set(ctype_html "text/html; charset=utf-8")
set(ctype_js "text/javascript; charset=utf-8")
set(ctype_css "text/css; charset=utf-8")
foreach(entry ${LIST})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 url)
  list(GET parts 1 kind)
  set(ctype "${ctype_${kind}}")
  list(GET parts 2 file)
  if(NOT EXISTS "${file}")
    continue()
  endif()
  string(APPEND body
    "__asm__(\".section .rodata\\n.balign 16\\npm_svc__asset${i}:\\n.incbin \\\"${file}\\\"\\n"
    "pm_svc__asset${i}_end:\\n.byte 0\\n.previous\\n\");\n"
    "extern const unsigned char pm_svc__asset${i}[], pm_svc__asset${i}_end[];\n")
  string(APPEND table "    {\"${url}\", \"${ctype}\", pm_svc__asset${i}, pm_svc__asset${i}_end},\n")
  math(EXPR i "${i} + 1")
endforeach()
if(i EQUAL 0)
  set(table "    {0, 0, 0, 0},\n")
endif()
string(APPEND body "const pm_svc_asset pm_svc_assets[] = {\n${table}};\n"
                   "const size_t pm_svc_nassets = ${i};\n")
file(WRITE "${OUT}" "${body}")
