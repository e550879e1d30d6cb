/* dbg32.c: os2trace testprogs, a 32-bit program with CodeView */
int total;

int _System Add2(int a, int b)
{
    register int sum;
    int scratch;
    sum = a;
    sum += b;
    scratch = sum;
    return scratch;
}

void main(void)
{
    total = Add2(2, 3);
    DosExit(1, total != 5);
}
