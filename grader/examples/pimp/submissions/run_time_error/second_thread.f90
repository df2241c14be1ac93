! The second thread writes through a null pointer: the whole program dies (SIGSEGV).
program pimp
  use omp_lib
  implicit none
  integer(8) :: n, i
  real(8) :: h, s, x
  real(8), pointer :: scratch(:) => null()
  read (*, *) n
  h = 1.0d0 / real(n, 8)
  s = 0.0d0
  !$omp parallel do private(x) reduction(+:s)
  do i = 1, n
    x = h * (real(i, 8) - 0.5d0)
    if (omp_get_thread_num() == 1) scratch(i) = x
    s = s + 4.0d0 / (1.0d0 + x * x)
  end do
  !$omp end parallel do
  write (*, '(F0.10)') h * s
end program pimp
