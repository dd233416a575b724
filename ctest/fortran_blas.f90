! A Fortran program calling the BLAS the way Fortran code does (implicit interfaces, as with
! a classic F77 EXTERNAL declaration): DGEMM, ZDOTC (a COMPLEX*16 function), DNRM2, IDAMAX
! and ZGEMV, each checked against plain loops on random data. Exits non-zero on a failure.
program fortran_blas
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: m = 23, n = 17, k = 31, lda = m + 2, ldb = k + 1, ldc = m + 3
  real(dp) :: a(lda, k), b(ldb, n), c(ldc, n), want(ldc, n), scale(ldc, n)
  real(dp) :: x(2*n), re(max(m, n)), im(max(m, n)), tol
  complex(dp) :: za(lda, n), zx(m), zy(n), zy0(n), zwant, zgot, alpha, beta
  complex(dp) :: zu(n), zv(n)
  integer :: i, j, l, failures, ibest, igot, nseed
  integer, allocatable :: seed(:)
  real(dp) :: s, sc, best
  real(dp), external :: dnrm2
  integer, external :: idamax
  complex(dp), external :: zdotc
  external :: dgemm, zgemv

  failures = 0
  ! A fixed seed: a failure must reproduce.
  call random_seed(size=nseed)
  allocate(seed(nseed))
  seed = 20261121
  call random_seed(put=seed)
  call random_number(a)
  call random_number(b)
  call random_number(c)
  a = a - 0.5_dp
  b = b - 0.5_dp
  want = c

  ! DGEMM: C := 1.5*A*B - 0.5*C on the leading m x n block of padded arrays.
  do j = 1, n
    do i = 1, m
      s = 0.0_dp
      sc = 0.0_dp
      do l = 1, k
        s = s + a(i, l) * b(l, j)
        sc = sc + abs(a(i, l) * b(l, j))
      end do
      want(i, j) = 1.5_dp * s - 0.5_dp * c(i, j)
      scale(i, j) = 1.5_dp * sc + 0.5_dp * abs(c(i, j))
    end do
  end do
  call dgemm('N', 'N', m, n, k, 1.5_dp, a, lda, b, ldb, -0.5_dp, c, ldc)
  do j = 1, n
    do i = 1, m
      tol = 16.0_dp * epsilon(1.0_dp) * (k + 1) * (scale(i, j) + abs(want(i, j)))
      if (abs(c(i, j) - want(i, j)) > tol) then
        if (failures < 5) print *, 'DGEMM mismatch at', i, j, c(i, j), want(i, j)
        failures = failures + 1
      end if
    end do
    ! rows past M are padding and must be untouched
    do i = m + 1, ldc
      if (c(i, j) /= want(i, j)) then
        print *, 'DGEMM wrote the padding at', i, j
        failures = failures + 1
      end if
    end do
  end do

  ! DNRM2 and IDAMAX with increment 2.
  call random_number(x)
  x = x - 0.5_dp
  s = 0.0_dp
  best = -1.0_dp
  ibest = 0
  do i = 1, n
    s = s + x(2*i - 1)**2
    if (abs(x(2*i - 1)) > best) then
      best = abs(x(2*i - 1))
      ibest = i
    end if
  end do
  if (abs(dnrm2(n, x, 2) - sqrt(s)) > 16.0_dp * epsilon(1.0_dp) * n * sqrt(s)) then
    print *, 'DNRM2', dnrm2(n, x, 2), 'want', sqrt(s)
    failures = failures + 1
  end if
  igot = idamax(n, x, 2)
  if (igot /= ibest) then
    print *, 'IDAMAX', igot, 'want', ibest
    failures = failures + 1
  end if

  ! ZDOTC: sum conjg(u_i) * v_i, returned as a COMPLEX*16 function value.
  call random_number(re(1:n))
  call random_number(im(1:n))
  zu = cmplx(re(1:n) - 0.5_dp, im(1:n) - 0.5_dp, kind=dp)
  call random_number(re(1:n))
  call random_number(im(1:n))
  zv = cmplx(re(1:n) - 0.5_dp, im(1:n) - 0.5_dp, kind=dp)
  zwant = (0.0_dp, 0.0_dp)
  sc = 0.0_dp
  do i = 1, n
    zwant = zwant + conjg(zu(i)) * zv(i)
    sc = sc + abs(zu(i)) * abs(zv(i))
  end do
  zgot = zdotc(n, zu, 1, zv, 1)
  if (abs(zgot - zwant) > 64.0_dp * epsilon(1.0_dp) * n * sc) then
    print *, 'ZDOTC', zgot, 'want', zwant
    failures = failures + 1
  end if

  ! ZGEMV: y := alpha * A^H x + beta y with A m x n.
  do j = 1, n
    call random_number(re(1:m))
    call random_number(im(1:m))
    za(1:m, j) = cmplx(re(1:m) - 0.5_dp, im(1:m) - 0.5_dp, kind=dp)
  end do
  call random_number(re(1:m))
  call random_number(im(1:m))
  zx = cmplx(re(1:m) - 0.5_dp, im(1:m) - 0.5_dp, kind=dp)
  zy = zv
  zy0 = zy
  alpha = (0.5_dp, -1.0_dp)
  beta = (0.25_dp, 0.75_dp)
  call zgemv('C', m, n, alpha, za, lda, zx, 1, beta, zy, 1)
  do j = 1, n
    zwant = (0.0_dp, 0.0_dp)
    sc = 0.0_dp
    do i = 1, m
      zwant = zwant + conjg(za(i, j)) * zx(i)
      sc = sc + abs(za(i, j)) * abs(zx(i))
    end do
    zwant = alpha * zwant + beta * zy0(j)
    if (abs(zy(j) - zwant) > 64.0_dp * epsilon(1.0_dp) * m * (abs(alpha) * sc + abs(beta * zy0(j)))) then
      if (failures < 10) print *, 'ZGEMV mismatch at', j, zy(j), zwant
      failures = failures + 1
    end if
  end do

  if (failures /= 0) then
    print *, 'fortran_blas:', failures, 'checks FAILED'
    error stop 1
  end if
  print *, 'fortran_blas: all checks passed'
end program fortran_blas
