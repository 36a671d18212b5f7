! The `use mmpi` form of mmpif.h: the same constants, the same implicit
! interfaces (choice buffers of any type, as with mpif.h), nothing more.
module mmpi
  implicit none
  include 'mmpif.h'
end module mmpi
