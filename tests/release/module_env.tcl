# Evaluates an environment-modules file without a modules installation and prints the resulting
# environment as shell assignments: what `module load` would set (prepend-path, setenv).
#   tclsh module_env.tcl MODULEFILE
proc prepend-path {var value} {
  if {[info exists ::env($var)] && $::env($var) ne ""} {
    set ::env($var) "$value:$::env($var)"
  } else {
    set ::env($var) $value
  }
  lappend ::changed $var
}
proc append-path {var value} {
  if {[info exists ::env($var)] && $::env($var) ne ""} {
    set ::env($var) "$::env($var):$value"
  } else {
    set ::env($var) $value
  }
  lappend ::changed $var
}
proc setenv {var value} { set ::env($var) $value; lappend ::changed $var }
proc module-whatis {args} {}
proc conflict {args} {}
set ::changed {}
source [lindex $argv 0]
foreach var [lsort -unique $::changed] {
  puts "export $var='$::env($var)'"
}
