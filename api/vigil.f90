! vigil — code regions from Fortran (the C API is vigil/vigil.h).
!
!     use vigil
!     call vigil_region_begin("solver")
!     ...
!     call vigil_region_end("solver")
!
! Build with `pkg-config --cflags --libs vigil-fortran`. The name is passed
! to C as a NUL-terminated copy without its trailing blanks, so that a name
! held in a longer CHARACTER variable names the same region as the literal.
module vigil
  use, intrinsic :: iso_c_binding, only : c_char, c_null_char
  implicit none
  private
  public :: vigil_region_begin, vigil_region_end

  interface
    subroutine c_region_begin(name) bind(C, name = 'vigil_region_begin')
      import :: c_char
      character(kind = c_char), dimension(*), intent(in) :: name
    end subroutine c_region_begin
    subroutine c_region_end(name) bind(C, name = 'vigil_region_end')
      import :: c_char
      character(kind = c_char), dimension(*), intent(in) :: name
    end subroutine c_region_end
  end interface

contains

  ! The name without its trailing blanks, NUL-terminated, in `buffer`.
  subroutine c_name(name, buffer)
    character(len = *), intent(in) :: name
    character(kind = c_char), dimension(len_trim(name) + 1), intent(out) :: buffer
    integer :: i
    do i = 1, len_trim(name)
      buffer(i) = name(i:i)
    end do
    buffer(len_trim(name) + 1) = c_null_char
  end subroutine c_name

  subroutine vigil_region_begin(name)
    character(len = *), intent(in) :: name
    character(kind = c_char), dimension(len_trim(name) + 1) :: buffer
    call c_name(name, buffer)
    call c_region_begin(buffer)
  end subroutine vigil_region_begin

  subroutine vigil_region_end(name)
    character(len = *), intent(in) :: name
    character(kind = c_char), dimension(len_trim(name) + 1) :: buffer
    call c_name(name, buffer)
    call c_region_end(buffer)
  end subroutine vigil_region_end

end module vigil
