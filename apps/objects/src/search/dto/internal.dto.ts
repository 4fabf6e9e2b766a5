import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class ValidateFilterRequestDto {
  @ApiProperty({ description: 'An ObjectSearchFilter', type: 'object', additionalProperties: true })
  @Allow()
  filter: unknown;

  @ApiPropertyOptional({ description: 'Path prefix for fault locations', example: 'definition.filter.filter' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  path?: string;
}

export class MembersRequestDto {
  @ApiProperty({ description: 'A compiled object set filter (larger bounds than client filters)', type: 'object', additionalProperties: true })
  @Allow()
  filter: unknown;

  @ApiProperty({ description: 'Most members to return; more is reported as tooLarge', example: 100000 })
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  limit: number;
}
