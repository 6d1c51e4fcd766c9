! Code regions from Fortran, for tests/integration/test_regions.c: "solver"
! holds a region whose name is in a longer CHARACTER variable (its trailing
! blanks are not part of the name), and writes a line of known length.
program regions_fortran
  use vigil
  implicit none
  character(len = 20) :: name
  name = "padded"
  call vigil_region_begin("solver")
  call vigil_region_begin(name)
  open (unit = 10, file = "fortran.out", status = "replace", action = "write")
  write (10, '(a)') "0123456789"
  close (10)
  call vigil_region_end(name)
  call vigil_region_end("solver")
  print '(a)', "fortran done"
end program regions_fortran
