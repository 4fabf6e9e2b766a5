import { ApiProperty } from '@nestjs/swagger';

/** Change (docs/api.md §12): one new object version, or one delete. */
export class ChangeDto {
  @ApiProperty({ example: 'prod' }) environmentId: string;
  @ApiProperty({ example: 'person-001' }) id: string;
  @ApiProperty({ example: 'person' }) type: string;
  @ApiProperty({ example: 2, description: 'WRITTEN: the new version; DELETED: the version the delete ended' }) version: number;
  @ApiProperty({ enum: ['WRITTEN', 'DELETED'], example: 'WRITTEN' }) kind: 'WRITTEN' | 'DELETED';
  @ApiProperty({
    example: '2026-11-27T10:00:00.000Z',
    description: "WRITTEN: the version's validFrom; DELETED: the ended version's validTo",
  })
  at: string;
}

export class ChangePageDto {
  @ApiProperty({ type: [ChangeDto], description: 'In commit order; may be empty, and may hold fewer than limit while more follow' })
  changes: ChangeDto[];
  @ApiProperty({ example: '1.mi8x2k3c', description: 'Where the next request starts (query after): pass it on as is' }) cursor: string;
}
